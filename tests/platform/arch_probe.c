/* A tiny shared object built by the tests for the target architecture (tests/platform.cmake):
   arch_test reads its ELF header to prove that test-built objects match the build architecture. */
int sparkops_arch_probe(void) { return 42; }
