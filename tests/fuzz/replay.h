/* The main of a fuzz target built as a plain program (-DCTA_FUZZ_STANDALONE):
 * replays files and folders of inputs through LLVMFuzzerTestOneInput, so
 * every build checks that the committed seeds still load or fail cleanly.
 * Included once, by the target's own file. */
#ifndef CTASIM_FUZZ_REPLAY_H
#define CTASIM_FUZZ_REPLAY_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* Replays one file; returns 0, or -1 when it cannot be read. */
static int replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		uint8_t *nb = realloc(buf, cap * 2);
		if (!nb)
			free(buf);
		buf = nb;
		cap *= 2;
	}
	fclose(f);
	if (!buf)
		return -1;
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

/* Usage: fuzz_trace_reader FILE-OR-DIR...; replays every file given and
 * every file directly inside each directory. */
int main(int argc, char **argv)
{
	unsigned files = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "%s: cannot stat\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (replay(argv[i]))
				return 1;
			files++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d)
			return 1;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char p[4096];
			snprintf(p, sizeof(p), "%s/%s", argv[i], e->d_name);
			if (replay(p)) {
				closedir(d);
				return 1;
			}
			files++;
		}
		closedir(d);
	}
	printf("replayed %u inputs\n", files);
	return files ? 0 : 1;
}
#endif
