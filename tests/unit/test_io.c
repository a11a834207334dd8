/* Tests of include/ctasim/io.h: the one number parser (overflow, shifts,
 * suffixes, signs, NaN, junk, ranges), control-byte escaping, private
 * temporaries (planted files and symlinks) and the sweep of stale ones. */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctasim/errors.h"
#include "ctasim/io.h"

#define ALL (CTA_NUM_SUFFIX | CTA_NUM_SHIFT)

static int64_t int_ok(const char *s)
{
	int64_t v = -12345;
	char why[96];
	assert_int_equal(cta_parse_int(s, INT64_MIN, INT64_MAX, ALL, &v, why, sizeof(why)), 0);
	return v;
}

static int int_rc(const char *s, char *why, size_t n)
{
	int64_t v = 77;
	int rc = cta_parse_int(s, INT64_MIN, INT64_MAX, ALL, &v, why, n);
	if (rc)
		assert_int_equal(v, 77); /* untouched on failure */
	return rc;
}

static void integers_in_every_accepted_form_parse_exactly(void **state)
{
	assert_int_equal(int_ok("1000"), 1000);
	assert_int_equal(int_ok("0x100"), 256);
	assert_int_equal(int_ok("010"), 10); /* no octal surprise */
	assert_int_equal(int_ok("64K"), 65536);
	assert_int_equal(int_ok("2M"), 2 << 20);
	assert_int_equal(int_ok("3G"), 3ll << 30);
	assert_int_equal(int_ok("1<<20"), 1 << 20);
	assert_int_equal(int_ok("-1<<3"), -8);
	assert_int_equal(int_ok("-9223372036854775808"), INT64_MIN);
	assert_int_equal(int_ok("9223372036854775807"), INT64_MAX);
	assert_int_equal(int_ok("1<<62"), 1ll << 62);
}

static void integer_overflow_is_refused_not_wrapped(void **state)
{
	char why[96];
	/* The audit's cases: each used to wrap to a small value and run. */
	assert_int_equal(int_rc("18014398509481985K", why, sizeof(why)), CTA_ERANGE);
	assert_non_null(strstr(why, "overflow"));
	assert_int_equal(int_rc("3<<62", why, sizeof(why)), CTA_ERANGE);
	assert_int_equal(int_rc("1<<63", why, sizeof(why)), CTA_ERANGE);
	assert_int_equal(int_rc("1<<64", why, sizeof(why)), CTA_ERANGE);
	assert_int_equal(int_rc("9223372036854775808", why, sizeof(why)), CTA_ERANGE);
	assert_int_equal(int_rc("18446744073709551616", why, sizeof(why)), CTA_ERANGE);
	assert_int_equal(int_rc("0xffffffffffffffffff", why, sizeof(why)), CTA_ERANGE);
	assert_int_equal(int_rc("-9223372036854775809", why, sizeof(why)), CTA_ERANGE);
	uint64_t u;
	assert_int_equal(cta_parse_uint("1<<63", 0, UINT64_MAX, ALL, &u, why, sizeof(why)), 0);
	assert_true(u == 1ull << 63);
	assert_int_equal(cta_parse_uint("2<<63", 0, UINT64_MAX, ALL, &u, why, sizeof(why)),
	                 CTA_ERANGE);
	assert_int_equal(cta_parse_uint("16G", 0, UINT64_MAX, ALL, &u, why, sizeof(why)), 0);
	assert_true(u == 16ull << 30);
	assert_int_equal(cta_parse_uint("17179869184G", 0, UINT64_MAX, ALL, &u, why, sizeof(why)),
	                 CTA_ERANGE);
}

static void junk_spaces_and_signs_are_refused(void **state)
{
	char why[96];
	const char *bad[] = {"",     " 1",    "1 ",  "1x",  "0x",  "K",   "1KK", "1<<",
	                     "1<<x", "1<<2K", "--1", "+-1", "1.5", "1e3", "nan", "0b101"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(int_rc(bad[i], why, sizeof(why)), CTA_EPARSE);
	uint64_t u = 5;
	/* --seed ' -1' used to become 2^64-1. */
	assert_int_equal(cta_parse_uint(" -1", 0, UINT64_MAX, 0, &u, why, sizeof(why)), CTA_EPARSE);
	assert_int_equal(cta_parse_uint("-1", 0, UINT64_MAX, 0, &u, why, sizeof(why)), CTA_EPARSE);
	assert_int_equal(cta_parse_uint("-0", 0, UINT64_MAX, 0, &u, why, sizeof(why)), 0);
	assert_int_equal(u, 0);
	/* Without the flags, suffixes and shifts are junk. */
	assert_int_equal(cta_parse_uint("4K", 0, UINT64_MAX, 0, &u, why, sizeof(why)), CTA_EPARSE);
	assert_int_equal(cta_parse_uint("1<<2", 0, UINT64_MAX, 0, &u, why, sizeof(why)),
	                 CTA_EPARSE);
}

static void ranges_are_checked_after_suffixes_and_named(void **state)
{
	char why[96];
	uint64_t u;
	/* --sm-limit 4294967297 used to become 1 SM. */
	assert_int_equal(cta_parse_uint("4294967297", 1, UINT32_MAX, 0, &u, why, sizeof(why)),
	                 CTA_ERANGE);
	assert_string_equal(why, "out of range [1, 4294967295]");
	assert_int_equal(cta_parse_uint("0", 1, 10, 0, &u, why, sizeof(why)), CTA_ERANGE);
	assert_int_equal(cta_parse_uint("2K", 1, 2048, ALL, &u, why, sizeof(why)), 0);
	assert_int_equal(cta_parse_uint("2K", 1, 2047, ALL, &u, why, sizeof(why)), CTA_ERANGE);
	int64_t v;
	assert_int_equal(cta_parse_int("-5", -4, 4, 0, &v, why, sizeof(why)), CTA_ERANGE);
	assert_string_equal(why, "out of range [-4, 4]");
}

static void reals_refuse_nan_infinity_and_junk(void **state)
{
	char why[96];
	double d = 0;
	assert_int_equal(cta_parse_real("0.25", 0, 1, &d, why, sizeof(why)), 0);
	assert_true(d == 0.25);
	assert_int_equal(cta_parse_real(".5", 0, 1, &d, why, sizeof(why)), 0);
	assert_int_equal(cta_parse_real("1e-1", 0, 1, &d, why, sizeof(why)), 0);
	const char *bad[] = {"nan",  "NaN",  "-nan",   "inf", "-inf", "infinity",
	                     " 0.5", "0.5 ", "0x1p-1", "",    "1,5",  "."};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(cta_parse_real(bad[i], 0, 1, &d, why, sizeof(why)), CTA_EPARSE);
	assert_int_equal(cta_parse_real("1.5", 0, 1, &d, why, sizeof(why)), CTA_ERANGE);
	assert_string_equal(why, "out of range [0, 1]");
	assert_int_equal(cta_parse_real("1e999", -1e300, 1e300, &d, why, sizeof(why)), CTA_ERANGE);
}

static void control_bytes_are_escaped(void **state)
{
	char b[128];
	assert_string_equal(cta_escape(b, sizeof(b), "a\x1b[31mred\a", 0), "a\\e[31mred\\a");
	assert_string_equal(cta_escape(b, sizeof(b), "x\ny\tz\r\x7f\x01", 0),
	                    "x\\ny\\tz\\r\\x7f\\x01");
	assert_string_equal(cta_escape(b, sizeof(b), "x\ny\tz", 1), "x\ny\tz");
	/* UTF-8 text passes; a C1 control (U+009B, CSI) and stray bytes do not. */
	assert_string_equal(cta_escape(b, sizeof(b), "caf\xc3\xa9", 0), "caf\xc3\xa9");
	assert_string_equal(cta_escape(b, sizeof(b),
	                               "\xc2\x9b"
	                               "2J",
	                               0),
	                    "\\xc2\\x9b2J");
	assert_string_equal(cta_escape(b, sizeof(b), "\x9b\xff", 0), "\\x9b\\xff");
	/* Truncation never cuts an escape in half. */
	assert_string_equal(cta_escape(b, 4, "ab\x1b", 0), "ab");
}

static char dir[64];

static int make_dir(void **state)
{
	strcpy(dir, "/tmp/ctasim-test-io-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void temporaries_never_follow_planted_links(void **state)
{
	char path[200], victim[200], link[240], err[300];
	snprintf(path, sizeof(path), "%s/out.svg", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	FILE *f = fopen(victim, "w");
	assert_non_null(f);
	fputs("precious\n", f);
	fclose(f);
	/* The names the old code used, and a few hundred more of our pid. */
	snprintf(link, sizeof(link), "%s.tmp.%ld", path, (long)getpid());
	assert_int_equal(symlink(victim, link), 0);
	for (int i = 1; i < 400; i++) {
		snprintf(link, sizeof(link), "%s.tmp.%ld-%d", path, (long)getpid(), i);
		assert_int_equal(symlink(victim, link), 0);
	}
	for (int k = 0; k < 50; k++) {
		char *tmp;
		int fd = cta_tmpfile_create(path, &tmp, err, sizeof(err));
		assert_true(fd >= 0);
		struct stat st;
		assert_int_equal(lstat(tmp, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(write(fd, "new\n", 4), 4);
		close(fd);
		assert_int_equal(unlink(tmp), 0);
		free(tmp);
	}
	f = fopen(victim, "r");
	char line[32] = "";
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "precious\n");
	/* A missing folder is the caller's mistake, named. */
	char *tmp;
	snprintf(path, sizeof(path), "%s/no/such/out.svg", dir);
	assert_int_equal(cta_tmpfile_create(path, &tmp, err, sizeof(err)), CTA_EINVAL);
	assert_null(tmp);
	assert_non_null(strstr(err, "No such file or directory"));
}

static int count_prefix(const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

static void stale_temporaries_of_dead_runs_are_swept(void **state)
{
	char path[200], stale[260], live[260], first[300];
	snprintf(path, sizeof(path), "%s/run.trace", dir);
	/* A pid that surely ran and ended: a child we waited for. */
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	snprintf(stale, sizeof(stale), "%s.tmp.%ld.AbCdEf", path, (long)dead);
	snprintf(live, sizeof(live), "%s.tmp.%ld.XyZ123", path, (long)getpid());
	close(open(stale, O_WRONLY | O_CREAT, 0644));
	close(open(live, O_WRONLY | O_CREAT, 0644));
	/* The old naming (PATH.tmp.<pid>) is recognised too. */
	char old[260];
	snprintf(old, sizeof(old), "%s.tmp.%ld", path, (long)dead);
	close(open(old, O_WRONLY | O_CREAT, 0644));
	/* Another file's temporaries and other names stay. */
	char other[260];
	snprintf(other, sizeof(other), "%s/run.trace2.tmp.%ld.q", dir, (long)dead);
	close(open(other, O_WRONLY | O_CREAT, 0644));
	assert_int_equal(cta_tmpfile_sweep(path, first, sizeof(first)), 2);
	assert_non_null(strstr(first, ".tmp."));
	assert_int_equal(access(stale, F_OK), -1);
	assert_int_equal(access(old, F_OK), -1);
	assert_int_equal(access(live, F_OK), 0); /* our own: still being written */
	assert_int_equal(access(other, F_OK), 0);
	assert_int_equal(count_prefix("run.trace.tmp."), 1);
	assert_int_equal(cta_tmpfile_sweep(path, first, sizeof(first)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(integers_in_every_accepted_form_parse_exactly),
	    cmocka_unit_test(integer_overflow_is_refused_not_wrapped),
	    cmocka_unit_test(junk_spaces_and_signs_are_refused),
	    cmocka_unit_test(ranges_are_checked_after_suffixes_and_named),
	    cmocka_unit_test(reals_refuse_nan_infinity_and_junk),
	    cmocka_unit_test(control_bytes_are_escaped),
	    cmocka_unit_test(temporaries_never_follow_planted_links),
	    cmocka_unit_test(stale_temporaries_of_dead_runs_are_swept),
	};
	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
