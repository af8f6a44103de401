// tessera_core: the expression-independent part of tessera, compiled once
// (see include/detail/precompiled.hpp). Built by Meson with
// -Dprecompiled=true; programs that link it define TSR_PRECOMPILED.
#define TSR_BUILDING_CORE
#include "../include/tessera.hpp"
