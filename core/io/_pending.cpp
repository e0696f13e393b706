// Temporary: keeps the target non-empty until this folder's first real source lands. Delete then.
