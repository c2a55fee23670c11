/* The one C++ runtime hook the device path needs on bare metal, so that no libsupc++ is linked:
 * the handler a pure virtual call would reach (an abstract class's vtable names it). Never
 * called in a correct program; it ends the run with a distinctive exit code. */
#include <stdlib.h>

void __cxa_pure_virtual(void) {
  exit(134);
}
