/* Fuzz target for the scenario reader (JSON, docs/SCENARIOS.md): any byte
 * string must either load or be rejected with a "NAME:LINE..." message,
 * never crash; whatever loads is also checked against a device and the
 * harness registry, as `ctasim scenario` does before running it. Built by
 * run.sh with libFuzzer, or with -DCTA_FUZZ_STANDALONE as a plain program
 * that replays files. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctasim/device.h"
#include "ctasim/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct cta_kernel_info *no_harness(const char *name)
{
	(void)name;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cta_scenario sc;
	char err[512];
	int rc = cta_scenario_parse(&sc, (const char *)data, size, "fuzz.json", err, sizeof(err));
	if (rc) {
		/* A rejection must say where: the name, then a line. */
		if (rc >= 0 || strncmp(err, "fuzz.json", 9) != 0)
			abort();
		cta_scenario_free(&sc);
		return 0;
	}
	const struct cta_device_model *m = cta_device_find("H100-SXM");
	if (m)
		(void)cta_scenario_check_device(&sc, m, err, sizeof(err));
	(void)cta_scenario_check_harnesses(&sc, no_harness, err, sizeof(err));
	cta_scenario_free(&sc);
	return 0;
}

#ifdef CTA_FUZZ_STANDALONE
#include "replay.h"
#endif
