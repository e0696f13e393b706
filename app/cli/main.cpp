// Temporary entry point until the real CLI lands.
int main() { return 2; }
