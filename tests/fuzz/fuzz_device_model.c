/* Fuzz target for the device-model reader (docs/DEVICES.md): any byte
 * string must either load or be rejected with a "FILE:LINE: message" error,
 * never crash; whatever loads must validate, save, and load back the same.
 * The reader takes a path, so each input goes through a file on tmpfs.
 * Built by run.sh with libFuzzer, or with -DCTA_FUZZ_STANDALONE as a plain
 * program that replays files. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctasim/device.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *tmp_path(const char *what)
{
	static char path[3][96];
	int i = what[0] == 'i' ? 0 : what[0] == 's' ? 1 : 2;
	if (!path[i][0]) {
		const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(path[i], sizeof(path[i]), "%s/ctasim-fuzz-%ld-%s.model", dir,
		         (long)getpid(), what);
	}
	return path[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = tmp_path("input");
	FILE *f = fopen(in, "wb");
	if (!f)
		return 0;
	if (fwrite(data, 1, size, f) != size) {
		fclose(f);
		return 0;
	}
	fclose(f);
	struct cta_device_model m;
	char err[512];
	int rc = cta_device_load(&m, in, err, sizeof(err));
	if (rc) {
		/* A rejection must say where: the file, then a line or a colon. */
		if (rc >= 0 || strncmp(err, in, strlen(in)) != 0)
			abort();
		unlink(in);
		return 0;
	}
	unlink(in);
	if (cta_device_validate(&m, err, sizeof(err)) != 0)
		abort(); /* the loader accepted a model that does not validate */
	/* Saved, loaded back and saved again: the same file. */
	const char *a = tmp_path("saved"), *b = tmp_path("again");
	if (cta_device_save(&m, a, err, sizeof(err)) != 0)
		abort();
	struct cta_device_model back;
	if (cta_device_load(&back, a, err, sizeof(err)) != 0 ||
	    cta_device_save(&back, b, err, sizeof(err)) != 0)
		abort();
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	if (fa && fb) {
		int ca, cb;
		do {
			ca = getc(fa);
			cb = getc(fb);
			if (ca != cb)
				abort();
		} while (ca != EOF);
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	unlink(a);
	unlink(b);
	return 0;
}

#ifdef CTA_FUZZ_STANDALONE
#include "replay.h"
#endif
