/* The module's repack code, compiled into the CPU-side layout test as its
 * own object (the module's copy is a libtool object). */
#include "../src/backend-cuda/repack.c"
