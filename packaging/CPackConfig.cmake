# CPack settings arrive with packaging work.
