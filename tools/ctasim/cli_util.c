/* Helpers shared by the subcommands: parsing numbers and dimension lists
 * with messages that name the option. */
#include "cli_util.h"
