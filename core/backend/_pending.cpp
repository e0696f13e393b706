// Temporary: keeps the target non-empty until registry.cpp lands. Delete then.
