// The translation unit that builds the test suite's one precompiled header (tests/CMakeLists.txt,
// bubblescope_test_pch); every test binary reuses it. It has no code of its own.
