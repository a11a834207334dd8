/* placeholder */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
int main(void);
int main(void) { return 0; }
