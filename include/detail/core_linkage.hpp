// Where the library's plain functions (no template arguments) are compiled.
//
// Header-only, each is an inline function: every translation unit that
// calls one and does not inline it (an error path, a node's destructor,
// the broadcast of two shapes) compiles its own copy, and the linker keeps
// one. In a program that links tessera_core (TSR_PRECOMPILED), the core
// holds the one definition and the program's translation units see only
// the declaration: they were 43% of a hello world's machine code.
//
// Such a function is written as
//
//   #if TSR_CORE_DEFINITIONS
//   TSR_CORE_INLINE void f(...) { ... }
//   #else
//   void f(...);
//   #endif
//
// (a member function is declared in its class and defined after it the
// same way). A translation unit with the CUDA backend keeps its own copies,
// as it keeps its own instantiations (detail/precompiled.hpp).
#pragma once
#include "config.hpp"

#if defined(TSR_BUILDING_CORE)
#define TSR_CORE_DEFINITIONS 1
#define TSR_CORE_INLINE
#elif defined(TSR_PRECOMPILED) && !TSR_CUDA_BACKEND
#define TSR_CORE_DEFINITIONS 0
#define TSR_CORE_INLINE
#else
#define TSR_CORE_DEFINITIONS 1
#define TSR_CORE_INLINE inline
#endif
