// Placeholder entry point; the CLI proper lives in cli/ (see docs/cli.md).
#include <cstdio>
int main() { std::puts("fusor " FUSOR_VERSION); return 0; }
