/* Tests of the trace format: the writer and reader round-trip every event
 * and field, the reader rejects each malformed input with its line number,
 * and the writer never leaves a whole-looking file behind an interrupted run. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctasim/perfetto.h"
#include "ctasim/svg.h"
#include "ctasim/trace.h"

static char dir[64];

static int make_dir(void **state)
{
	strcpy(dir, "/tmp/ctasim-test-trace-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *path_in_dir(const char *name)
{
	static char p[4][160];
	static int slot;
	slot = (slot + 1) % 4;
	snprintf(p[slot], sizeof(p[slot]), "%s/%s", dir, name);
	return p[slot];
}

static void fill_header(struct cta_trace_header *h)
{
	memset(h, 0, sizeof(*h));
	h->version = CTA_TRACE_VERSION;
	strcpy(h->backend, "sim");
	strcpy(h->device, "H100-SXM");
	strcpy(h->ctasim_version, "0.1.0");
	strcpy(h->clc, "model");
	h->seed = 42;
	h->tick_ns = 1;
	h->deterministic = 1;
	h->kernel_count = 2;
	struct cta_trace_kernel *k = &h->kernels[0];
	strcpy(k->name, "vec_add");
	k->grid[0] = 1000, k->grid[1] = 2, k->grid[2] = 3;
	k->block[0] = 256, k->block[1] = 1, k->block[2] = 1;
	k->cluster[0] = 2, k->cluster[1] = 1, k->cluster[2] = 1;
	k->smem_bytes = 49152;
	k->stream = 0;
	k->priority = 0;
	k->release_ns = 0;
	k = &h->kernels[1];
	strcpy(k->name, "my \"odd\" kernel, v=2");
	k->grid[0] = k->grid[1] = k->grid[2] = 1;
	k->block[0] = k->block[1] = k->block[2] = 1;
	k->cluster[0] = k->cluster[1] = k->cluster[2] = 1;
	k->stream = -3;
	k->priority = -5;
	k->release_ns = UINT64_MAX - 1;
}

static const char *read_all(const char *path)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void round_trip_keeps_every_event_and_field(void **state)
{
	struct cta_trace_header h;
	fill_header(&h);
	struct cta_trace_rec recs[CTA_TEV__COUNT + 4];
	size_t n = 0;
	for (int ev = 0; ev < CTA_TEV__COUNT; ev++) {
		recs[n] = (struct cta_trace_rec){
		    .t_ns = 1000u * (unsigned)ev + 7,
		    .ev = (cta_trace_event)ev,
		    .kernel = (uint32_t)(ev % 2),
		    .block = (uint64_t)ev * 3,
		    .phys = (uint64_t)ev * 5,
		    .sm = (uint64_t)ev,
		    .arg = ev % 3 ? (uint64_t)ev : CTA_TRACE_NONE,
		    .code = ev - 4,
		    .text = NULL,
		};
		if (ev == CTA_TEV_CANCEL_DONE)
			recs[n].code = CTA_CANCEL_FAIL_PRIORITY;
		n++;
	}
	/* Extremes and awkward text. */
	recs[n++] = (struct cta_trace_rec){.t_ns = UINT64_MAX - 1,
	                                   .ev = CTA_TEV_UB,
	                                   .kernel = UINT32_MAX,
	                                   .block = CTA_TRACE_NONE,
	                                   .phys = UINT64_MAX - 1,
	                                   .sm = 0,
	                                   .arg = 0,
	                                   .code = INT32_MIN,
	                                   .text = "rule, with \"quotes\", and commas"};
	recs[n++] = (struct cta_trace_rec){.t_ns = 0,
	                                   .ev = CTA_TEV_WARN,
	                                   .kernel = 1,
	                                   .block = 0,
	                                   .phys = 0,
	                                   .sm = 131,
	                                   .arg = 31,
	                                   .code = INT32_MAX,
	                                   .text = "plain text with spaces"};

	const char *path = path_in_dir("rt.trace");
	cta_trace_writer *w;
	assert_int_equal(cta_trace_writer_open(&w, path, &h), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(cta_trace_writer_add(w, &recs[i]), 0);
	assert_int_equal(cta_trace_writer_close(w, 1), 0);

	struct cta_trace t;
	char err[256];
	assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
	assert_int_equal(t.complete, 1);
	assert_int_equal(t.count, n);
	assert_int_equal(t.header.version, 1);
	assert_string_equal(t.header.backend, "sim");
	assert_string_equal(t.header.device, "H100-SXM");
	assert_string_equal(t.header.clc, "model");
	assert_string_equal(t.header.ctasim_version, "0.1.0");
	assert_true(t.header.seed == 42);
	assert_true(t.header.tick_ns == 1.0);
	assert_int_equal(t.header.deterministic, 1);
	assert_int_equal(t.header.kernel_count, 2);
	for (unsigned k = 0; k < 2; k++) {
		const struct cta_trace_kernel *a = &h.kernels[k], *b = &t.header.kernels[k];
		assert_string_equal(a->name, b->name);
		assert_memory_equal(a->grid, b->grid, sizeof(a->grid));
		assert_memory_equal(a->block, b->block, sizeof(a->block));
		assert_memory_equal(a->cluster, b->cluster, sizeof(a->cluster));
		assert_true(a->smem_bytes == b->smem_bytes);
		assert_int_equal(a->stream, b->stream);
		assert_int_equal(a->priority, b->priority);
		assert_true(a->release_ns == b->release_ns);
	}
	for (size_t i = 0; i < n; i++) {
		const struct cta_trace_rec *a = &recs[i], *b = &t.recs[i];
		assert_true(a->t_ns == b->t_ns);
		assert_int_equal(a->ev, b->ev);
		assert_int_equal(a->kernel, b->kernel);
		assert_true(a->block == b->block);
		assert_true(a->phys == b->phys);
		assert_true(a->sm == b->sm);
		assert_true(a->arg == b->arg);
		assert_int_equal(a->code, b->code);
		if (a->text)
			assert_string_equal(a->text, b->text);
		else
			assert_null(b->text);
	}
	cta_trace_free(&t);
}

static void written_file_has_documented_layout(void **state)
{
	struct cta_trace_header h;
	fill_header(&h);
	h.kernel_count = 1;
	h.tick_ns = 31.25;
	const char *path = path_in_dir("layout.trace");
	cta_trace_writer *w;
	assert_int_equal(cta_trace_writer_open(&w, path, &h), 0);
	struct cta_trace_rec r = {.t_ns = 1500,
	                          .ev = CTA_TEV_START,
	                          .kernel = 0,
	                          .block = 7,
	                          .phys = 7,
	                          .sm = 12,
	                          .arg = CTA_TRACE_NONE,
	                          .code = 0};
	assert_int_equal(cta_trace_writer_add(w, &r), 0);
	assert_int_equal(cta_trace_writer_close(w, 1), 0);
	assert_string_equal(read_all(path),
	                    "#ctasim-trace 1\n#backend sim\n#device H100-SXM\n#seed 42\n"
	                    "#tick_ns 31.25\n#clc model\n#deterministic 1\n"
	                    "#ctasim_version 0.1.0\n"
	                    "#kernel 0 name=vec_add grid=1000,2,3 block=256,1,1 cluster=2,1,1 "
	                    "smem=49152 stream=0 priority=0 release_ns=0\n"
	                    "t_ns,event,kernel,block,phys,sm,arg,code,text\n"
	                    "1500,start,0,7,7,12,-,0,\n"
	                    "#end records=1\n");
}

static void unclosed_writer_leaves_no_file_at_path(void **state)
{
	struct cta_trace_header h;
	fill_header(&h);
	const char *path = path_in_dir("never_closed.trace");
	cta_trace_writer *w;
	assert_int_equal(cta_trace_writer_open(&w, path, &h), 0);
	struct cta_trace_rec r = {.ev = CTA_TEV_LAUNCH, .kernel = 0, .block = CTA_TRACE_NONE};
	for (int i = 0; i < 100000; i++)
		assert_int_equal(cta_trace_writer_add(w, &r), 0);
	/* The process "dies" here: the handle is leaked on purpose. */
	assert_int_equal(access(path, F_OK), -1);
	/* The temporary is PATH.tmp.<pid>.<random>: the only such file. */
	char tmp[400], prefix[64];
	snprintf(prefix, sizeof(prefix), "never_closed.trace.tmp.%ld.", (long)getpid());
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	int found = 0;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix))) {
			snprintf(tmp, sizeof(tmp), "%s/%s", dir, e->d_name);
			found++;
		}
	closedir(d);
	assert_int_equal(found, 1);
	/* With its temporary gone, a late close has nothing to rename: it
	 * fails and still leaves no file at PATH (and frees the handle). */
	unlink(tmp);
	assert_int_equal(cta_trace_writer_close(w, 1), CTA_EIO);
	assert_int_equal(access(path, F_OK), -1);
	assert_non_null(strstr(cta_trace_writer_errmsg(NULL), "cannot rename"));
}

static void two_writers_to_one_path_do_not_share_a_temporary(void **state)
{
	struct cta_trace_header h;
	fill_header(&h);
	const char *path = path_in_dir("twice.trace");
	cta_trace_writer *a, *b;
	assert_int_equal(cta_trace_writer_open(&a, path, &h), 0);
	assert_int_equal(cta_trace_writer_open(&b, path, &h), 0);
	struct cta_trace_rec r = {.ev = CTA_TEV_LAUNCH, .kernel = 0, .block = CTA_TRACE_NONE};
	assert_int_equal(cta_trace_writer_add(a, &r), 0);
	assert_int_equal(cta_trace_writer_close(b, 1), 0);
	assert_int_equal(cta_trace_writer_close(a, 1), 0);
	struct cta_trace t;
	char err[256];
	assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
	assert_int_equal(t.count, 1);
	cta_trace_free(&t);
}

static void incomplete_close_keeps_records_and_loads_as_incomplete(void **state)
{
	struct cta_trace_header h;
	fill_header(&h);
	const char *path = path_in_dir("partial.trace");
	cta_trace_writer *w;
	assert_int_equal(cta_trace_writer_open(&w, path, &h), 0);
	struct cta_trace_rec r = {.t_ns = 5,
	                          .ev = CTA_TEV_START,
	                          .kernel = 0,
	                          .block = 1,
	                          .phys = 1,
	                          .sm = 2,
	                          .arg = CTA_TRACE_NONE};
	assert_int_equal(cta_trace_writer_add(w, &r), 0);
	assert_int_equal(cta_trace_writer_add(w, &r), 0);
	assert_int_equal(cta_trace_writer_close(w, 0), 0);
	const char *text = read_all(path);
	assert_non_null(strstr(text, "\n#incomplete records=2\n"));
	assert_null(strstr(text, "#end"));
	struct cta_trace t;
	char err[256];
	assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
	assert_int_equal(t.complete, 0);
	assert_int_equal(t.count, 2);
	cta_trace_free(&t);
}

static void writer_rejects_bad_header(void **state)
{
	struct cta_trace_header h;
	cta_trace_writer *w;
	fill_header(&h);
	strcpy(h.backend, "gpu");
	assert_int_equal(cta_trace_writer_open(&w, path_in_dir("bad.trace"), &h), CTA_EINVAL);
	assert_null(w);
	assert_non_null(strstr(cta_trace_writer_errmsg(NULL), "backend"));
	fill_header(&h);
	strcpy(h.device, "two\nlines");
	assert_int_equal(cta_trace_writer_open(&w, path_in_dir("bad.trace"), &h), CTA_EINVAL);
	fill_header(&h);
	h.tick_ns = 0;
	assert_int_equal(cta_trace_writer_open(&w, path_in_dir("bad.trace"), &h), CTA_EINVAL);
	assert_int_equal(access(path_in_dir("bad.trace"), F_OK), -1);
}

static void writer_refuses_records_the_reader_would_reject(void **state)
{
	struct cta_trace_header h;
	fill_header(&h);
	const char *path = path_in_dir("refused.trace");
	cta_trace_writer *w;
	assert_int_equal(cta_trace_writer_open(&w, path, &h), 0);
	struct cta_trace_rec r = {.ev = CTA_TEV_START, .kernel = 2, .block = 0, .phys = 0, .sm = 0};
	assert_int_equal(cta_trace_writer_add(w, &r), CTA_EINVAL);
	assert_non_null(strstr(cta_trace_writer_errmsg(w), "does not declare"));
	r.kernel = 0;
	r.ev = CTA_TEV_CANCEL_DONE;
	r.code = 7;
	assert_int_equal(cta_trace_writer_add(w, &r), CTA_EINVAL);
	r.ev = (cta_trace_event)CTA_TEV__COUNT;
	assert_int_equal(cta_trace_writer_add(w, &r), CTA_EINVAL);
	/* The writer is still usable and the refused records left no trace. */
	r.ev = CTA_TEV_START;
	r.code = 0;
	assert_int_equal(cta_trace_writer_add(w, &r), 0);
	assert_int_equal(cta_trace_writer_close(w, 1), 0);
	struct cta_trace t;
	char err[256];
	assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
	assert_int_equal(t.count, 1);
	cta_trace_free(&t);
}

static void writer_reports_unwritable_directory(void **state)
{
	struct cta_trace_header h;
	cta_trace_writer *w;
	fill_header(&h);
	/* A missing folder is the caller's mistake (bad input), named as such. */
	assert_int_equal(cta_trace_writer_open(&w, "/nonexistent-dir/x.trace", &h), CTA_EINVAL);
	assert_non_null(strstr(cta_trace_writer_errmsg(NULL),
	                       "/nonexistent-dir/x.trace: cannot create a file there"));
	/* So is a folder where the trace belongs. */
	assert_int_equal(cta_trace_writer_open(&w, "/tmp", &h), CTA_EINVAL);
	assert_non_null(strstr(cta_trace_writer_errmsg(NULL), "/tmp: is a directory"));
}

static void text_control_characters_become_spaces(void **state)
{
	struct cta_trace_header h;
	fill_header(&h);
	const char *path = path_in_dir("ctl.trace");
	cta_trace_writer *w;
	assert_int_equal(cta_trace_writer_open(&w, path, &h), 0);
	struct cta_trace_rec r = {.ev = CTA_TEV_WARN,
	                          .kernel = 0,
	                          .block = 0,
	                          .phys = 0,
	                          .sm = 0,
	                          .arg = 0,
	                          .text = "line one\nline two\r,x"};
	assert_int_equal(cta_trace_writer_add(w, &r), 0);
	assert_int_equal(cta_trace_writer_close(w, 1), 0);
	struct cta_trace t;
	char err[256];
	assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
	assert_string_equal(t.recs[0].text, "line one line two ,x");
	cta_trace_free(&t);
}

/* A minimal valid file; the malformed cases below each break one thing. */
#define HDR                                                                                        \
	"#ctasim-trace 1\n#backend cuda\n#device NVIDIA H100 80GB HBM3\n#seed 1\n"                 \
	"#tick_ns 32\n#clc emulated\n#deterministic 0\n#ctasim_version 0.1.0\n"                    \
	"#kernel 0 name=k grid=4,1,1 block=32,1,1 cluster=1,1,1 smem=0 stream=0 priority=0 "       \
	"release_ns=0\n"                                                                           \
	"t_ns,event,kernel,block,phys,sm,arg,code,text\n"
#define REC1 "10,start,0,0,0,3,-,0,\n"

struct bad_case {
	const char *name;
	const char *text;
	int code;
	const char *where; /* ":LINE: " */
	const char *what;
};

static const struct bad_case bad_cases[] = {
    {"unknown event", HDR REC1 "11,begin,0,1,1,3,-,0,\n#end records=2\n", CTA_EPARSE,
     ":12: ", "unknown event 'begin'"},
    {"too few columns", HDR "10,start,0,0,0,3,-,0\n#end records=1\n", CTA_EPARSE,
     ":11: ", "wrong column count"},
    {"too many columns", HDR "10,start,0,0,0,3,-,0,,x\n#end records=1\n", CTA_EPARSE,
     ":11: ", "wrong column count"},
    {"bad number", HDR REC1 "10,end,0,zero,0,3,-,0,\n#end records=2\n", CTA_EPARSE,
     ":12: ", "bad number 'zero' in column 'block'"},
    {"negative time", HDR "-10,end,0,0,0,3,-,0,\n#end records=1\n", CTA_EPARSE,
     ":11: ", "bad number '-10' in column 't_ns'"},
    {"number overflow", HDR "18446744073709551616,end,0,0,0,3,-,0,\n#end records=1\n", CTA_EPARSE,
     ":11: ", "bad number"},
    {"unknown header key", "#ctasim-trace 1\n#backend sim\n#colour blue\n", CTA_EPARSE,
     ":3: ", "unknown header key 'colour'"},
    {"wrong version", "#ctasim-trace 2\n#backend sim\n", CTA_EVERSION, ":1: ", "version 2"},
    {"not a trace", "t_ns,event\n", CTA_EPARSE, ":1: ", "not a ctasim trace"},
    {"duplicate header key", "#ctasim-trace 1\n#backend sim\n#seed 1\n#seed 2\n", CTA_EPARSE,
     ":4: ", "duplicate header key 'seed'"},
    {"missing header key",
     "#ctasim-trace 1\n#backend sim\n#device D\n#tick_ns 1\n#clc none\n#deterministic 1\n"
     "#ctasim_version 0.1.0\nt_ns,event,kernel,block,phys,sm,arg,code,text\n#end records=0\n",
     CTA_EPARSE, ":8: ", "missing header key 'seed'"},
    {"records after end marker", HDR REC1 "#end records=1\n" REC1, CTA_EPARSE,
     ":13: ", "after the end marker"},
    {"record count mismatch", HDR REC1 REC1 "#end records=3\n", CTA_EPARSE,
     ":13: ", "record count mismatch"},
    {"missing end marker", HDR REC1 REC1, CTA_EPARSE, ":12: ", "truncated: no end marker"},
    {"cut inside a line", HDR REC1 "10,sta", CTA_EPARSE, ":12: ", "truncated"},
    {"undeclared kernel", HDR "10,start,1,0,0,3,-,0,\n#end records=1\n", CTA_EPARSE,
     ":11: ", "kernel 1 not declared"},
    {"unknown cancel outcome", HDR "10,cancel_done,0,0,0,3,-,9,\n#end records=1\n", CTA_EPARSE,
     ":11: ", "unknown outcome 9"},
    {"unterminated quote", HDR "10,ub,0,0,0,3,1,0,\"oops\n#end records=1\n", CTA_EPARSE,
     ":11: ", "unterminated quote"},
    {"bad kernel dims",
     "#ctasim-trace 1\n#backend sim\n#device D\n#seed 1\n#tick_ns 1\n#clc none\n"
     "#deterministic 1\n#ctasim_version 0.1.0\n#kernel 0 name=k grid=4,1 block=1,1,1 "
     "cluster=1,1,1 smem=0 stream=0 priority=0 release_ns=0\n",
     CTA_EPARSE, ":9: ", "bad dimensions '4,1' for grid"},
    {"kernel missing key",
     "#ctasim-trace 1\n#backend sim\n#device D\n#seed 1\n#tick_ns 1\n#clc none\n"
     "#deterministic 1\n#ctasim_version 0.1.0\n#kernel 0 name=k grid=4,1,1 block=1,1,1\n",
     CTA_EPARSE, ":9: ", "missing key 'cluster'"},
    {"bad tick", "#ctasim-trace 1\n#tick_ns -1\n", CTA_EPARSE, ":2: ", "tick_ns"},
    {"bad end marker", HDR REC1 "#end 1\n", CTA_EPARSE, ":12: ", "bad end marker"},
    {"empty file", "", CTA_EPARSE, ":1: ", "empty file"},
    {"control character", HDR "10,ub,0,0,0,3,1,0,a\tb\n#end records=1\n", CTA_EPARSE,
     ":11: ", "control character 0x09"},
};

static void reader_rejects_malformed_input_with_line_number(void **state)
{
	const char *path = path_in_dir("bad_input.trace");
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		write_text(path, c->text);
		struct cta_trace t;
		char err[256];
		int rc = cta_trace_read(&t, path, err, sizeof(err));
		if (rc != c->code || strncmp(err, path, strlen(path)) ||
		    strncmp(err + strlen(path), c->where, strlen(c->where)) ||
		    !strstr(err, c->what))
			fail_msg("case '%s': rc %d, message '%s'; expected rc %d, '%s%s...%s'",
			         c->name, rc, err, c->code, path, c->where, c->what);
		assert_null(t.recs);
	}
}

static void reader_accepts_minimal_hand_written_trace(void **state)
{
	const char *path = path_in_dir("good_input.trace");
	write_text(path, HDR REC1 "12,ub,0,0,0,3,5,0,\"a,\"\"b\"\"\"\r\n#end records=2\n");
	struct cta_trace t;
	char err[256] = "";
	assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
	assert_string_equal(t.header.device, "NVIDIA H100 80GB HBM3");
	assert_true(t.header.tick_ns == 32.0);
	assert_string_equal(t.header.clc, "emulated");
	assert_int_equal(t.count, 2);
	assert_string_equal(t.recs[1].text, "a,\"b\"");
	assert_true(t.recs[0].arg == CTA_TRACE_NONE);
	cta_trace_free(&t);
}

/* Record i of the streaming test: texts of varied length (up to 1.5 KiB)
 * every 7th record, so lines and texts straddle the reader's window. */
static struct cta_trace_rec stream_rec(size_t i, char *text, size_t cap)
{
	struct cta_trace_rec r = {.t_ns = i * 3,
	                          .ev = i % 7 ? CTA_TEV_START : CTA_TEV_UB,
	                          .kernel = (uint32_t)(i % 2),
	                          .block = i,
	                          .phys = i ^ 5,
	                          .sm = i % 132,
	                          .arg = i % 7 ? CTA_TRACE_NONE : i,
	                          .code = 0};
	if (i % 7 == 0) {
		size_t len = (i * 37) % 1500;
		int n = snprintf(text, cap, "rule %zu, \"quoted\" ", i);
		for (size_t j = (size_t)n; j < len && j + 1 < cap; j++)
			text[j] = (char)('a' + j % 26);
		text[len > (size_t)n ? len : (size_t)n] = 0;
		r.text = text;
	}
	return r;
}

struct stream_check {
	size_t seen, stop_at;
	char text[2048];
};

static int check_streamed(void *ctx, const struct cta_trace_header *h,
                          const struct cta_trace_rec *r)
{
	struct stream_check *c = ctx;
	struct cta_trace_rec want = stream_rec(c->seen, c->text, sizeof(c->text));
	assert_int_equal(h->kernel_count, 2);
	assert_int_equal(r->block, want.block);
	assert_int_equal(r->sm, want.sm);
	if (want.text)
		assert_string_equal(r->text, want.text);
	else
		assert_null(r->text);
	return ++c->seen == c->stop_at ? 99 : 0;
}

static void reader_streams_traces_larger_than_its_window(void **state)
{
	/* About 8 MB of text, several times the reader's 1 MiB window, plain
	 * and compressed both ways. */
	enum { N = 120000 };
	static const char *const names[] = {"big.trace", "big.trace.gz", "big.trace.zst"};
	struct cta_trace_header h;
	fill_header(&h);
	char text[2048];
	for (int f = 0; f < 3; f++) {
		const char *path = path_in_dir(names[f]);
		cta_trace_writer *w;
		int rc = cta_trace_writer_open(&w, path, &h);
		if (rc == CTA_EUNSUPPORTED)
			continue; /* a build without zlib or libzstd */
		assert_int_equal(rc, 0);
		for (size_t i = 0; i < N; i++) {
			struct cta_trace_rec r = stream_rec(i, text, sizeof(text));
			assert_int_equal(cta_trace_writer_add(w, &r), 0);
		}
		assert_int_equal(cta_trace_writer_close(w, 1), 0);
		struct cta_trace t;
		char err[256] = "";
		assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
		assert_int_equal(t.count, N);
		assert_true(t.complete);
		for (size_t i = 0; i < N; i++) {
			struct cta_trace_rec r = stream_rec(i, text, sizeof(text));
			assert_int_equal(t.recs[i].t_ns, r.t_ns);
			assert_int_equal(t.recs[i].block, r.block);
			assert_int_equal(t.recs[i].phys, r.phys);
			assert_int_equal(t.recs[i].sm, r.sm);
			assert_int_equal(t.recs[i].arg, r.arg);
			if (r.text)
				assert_string_equal(t.recs[i].text, r.text);
			else
				assert_null(t.recs[i].text);
		}
		cta_trace_free(&t);
		/* The same through cta_trace_stream: every record in order, none
		 * kept; a callback's non-zero return stops the pass. */
		struct stream_check c = {0};
		assert_int_equal(cta_trace_stream(&t, path, check_streamed, &c, err, sizeof(err)),
		                 0);
		assert_int_equal(c.seen, N);
		assert_int_equal(t.count, N);
		assert_null(t.recs);
		assert_true(t.complete);
		struct stream_check stop = {.stop_at = 1000};
		assert_int_equal(
		    cta_trace_stream(&t, path, check_streamed, &stop, err, sizeof(err)), 99);
		assert_int_equal(stop.seen, 1000);
	}
}

/* Renders t (or lt, a lean read, when not NULL) into a malloc'd string:
 * how 0 svg, 1 Perfetto by GPU, 2 by kernel. */
static char *render(const struct cta_trace *t, const cta_trace_lean *lt, int how, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct cta_perfetto_opts po = CTA_PERFETTO_OPTS_INIT;
	po.group = how == 2 ? CTA_PERFETTO_GROUP_KERNEL : CTA_PERFETTO_GROUP_GPU;
	if (lt)
		*rc = how ? cta_trace_lean_export_perfetto(lt, f, &po)
		          : cta_trace_lean_render_svg(lt, f, NULL);
	else
		*rc = how ? cta_trace_export_perfetto(t, f, &po) : cta_trace_render_svg(t, f, NULL);
	fclose(f);
	return buf;
}

static void lean_read_renders_what_a_full_read_renders(void **state)
{
	/* Two kernels on 4 SMs: overlapping blocks, steals after successful
	 * cancels, a failed one, UB and a warning with text, records out of
	 * time order as the simulator writes them. */
	struct cta_trace_header h;
	fill_header(&h);
	const char *path = path_in_dir("lean.trace");
	cta_trace_writer *w;
	assert_int_equal(cta_trace_writer_open(&w, path, &h), 0);
	struct cta_trace_rec r;
#define REC(T, EV, K, B, P, SM, ARG, CODE, TEXT)                                                   \
	do {                                                                                       \
		r = (struct cta_trace_rec){T, CTA_TEV_##EV, K, B, P, SM, ARG, CODE, TEXT};         \
		assert_int_equal(cta_trace_writer_add(w, &r), 0);                                  \
	} while (0)
	REC(0, LAUNCH, 0, CTA_TRACE_NONE, CTA_TRACE_NONE, CTA_TRACE_NONE, 0, 0, NULL);
	REC(5, LAUNCH, 1, CTA_TRACE_NONE, CTA_TRACE_NONE, CTA_TRACE_NONE, 0, -1, NULL);
	for (unsigned b = 0; b < 24; b++) {
		uint32_t k = b % 3 == 2;
		uint64_t t0 = 100 + 40 * (b / 8), sm = b % 4;
		REC(t0 - 10, DISPATCH, k, b, b, sm, CTA_TRACE_NONE, 0, NULL);
		REC(t0, START, k, b, b, sm, CTA_TRACE_NONE, 0, NULL);
		if (b % 5 == 0) {
			REC(t0 + 5, CANCEL, k, b, b, sm, CTA_TRACE_NONE, 0, NULL);
			REC(t0 + 9, CANCEL_DONE, k, b, b, sm, 100 + b, CTA_CANCEL_SUCCESS, NULL);
			REC(t0 + 9, STEAL, k, 100 + b, b, sm, CTA_TRACE_NONE, 0, NULL);
		}
		if (b == 7) {
			REC(t0 + 6, CANCEL, k, b, b, sm, CTA_TRACE_NONE, 0, NULL);
			REC(t0 + 8, CANCEL_DONE, k, b, b, sm, CTA_TRACE_NONE,
			    CTA_CANCEL_FAIL_PRIORITY, NULL);
		}
		if (b == 11)
			REC(t0 + 3, UB, k, b, b, sm, 7, 0, "read_failed_index: \"x\" <y>");
		if (b == 13)
			REC(t0 + 4, WARN, k, b, b, sm, 3, 0, "builtin_blockidx_in_body");
	}
	for (unsigned b = 0; b < 24; b++)
		REC(100 + 40 * (b / 8) + 30 + b % 7, END, b % 3 == 2, b, b, b % 4, CTA_TRACE_NONE,
		    0, NULL);
	REC(400, KERNEL_END, 0, CTA_TRACE_NONE, CTA_TRACE_NONE, CTA_TRACE_NONE, 0, 0, NULL);
#undef REC
	assert_int_equal(cta_trace_writer_close(w, 1), 0);

	struct cta_trace full;
	cta_trace_lean *lean0, *lean1;
	char err[256] = "";
	assert_int_equal(cta_trace_read(&full, path, err, sizeof(err)), 0);
	assert_int_equal(cta_trace_read_lean(&lean0, path, 0, err, sizeof(err), NULL, NULL), 0);
	assert_int_equal(cta_trace_read_lean(&lean1, path, 1, err, sizeof(err), NULL, NULL), 0);
	/* The block records are not kept: launches, cancels, UB, warning,
	 * kernel_end. */
	const struct cta_trace *kept = cta_trace_lean_trace(lean0);
	assert_int_equal(kept->count, 2 + 5 * 2 + 2 + 1 + 1 + 1);
	assert_true(kept->complete);
	assert_string_equal(kept->header.device, full.header.device);
	for (int how = 0; how < 3; how++) {
		int rc_full, rc_lean;
		char *a = render(&full, NULL, how, &rc_full);
		char *b = render(NULL, how == 2 ? lean1 : lean0, how, &rc_lean);
		assert_int_equal(rc_full, 0);
		assert_int_equal(rc_lean, 0);
		assert_string_equal(a, b);
		assert_true(strlen(a) > 1000);
		free(a);
		free(b);
	}
	/* A lean read made for one grouping refuses the other. */
	int rc;
	free(render(NULL, lean0, 2, &rc));
	assert_int_equal(rc, CTA_EINVAL);
	free(render(NULL, lean1, 0, &rc));
	assert_int_equal(rc, CTA_EINVAL);
	/* A broken trace is refused as by cta_trace_read, nothing returned. */
	write_text(path_in_dir("lean_bad.trace"), "#ctasim-trace 1\n#backend sim\n");
	cta_trace_lean *bad = (cta_trace_lean *)&rc;
	assert_int_equal(cta_trace_read_lean(&bad, path_in_dir("lean_bad.trace"), 0, err,
	                                     sizeof(err), NULL, NULL),
	                 CTA_EPARSE);
	assert_null(bad);
	assert_non_null(strstr(err, "lean_bad.trace:"));
	cta_trace_free(&full);
	cta_trace_lean_free(lean0);
	cta_trace_lean_free(lean1);
	cta_trace_lean_free(NULL);
}

static void reader_reports_missing_file(void **state)
{
	struct cta_trace t;
	char err[256];
	assert_int_equal(cta_trace_read(&t, path_in_dir("nope.trace"), err, sizeof(err)), CTA_EIO);
	assert_non_null(strstr(err, "nope.trace"));
}

static void names_of_events_and_outcomes(void **state)
{
	assert_string_equal(cta_trace_event_name(CTA_TEV_CANCEL_DONE), "cancel_done");
	assert_string_equal(cta_trace_event_name(CTA_TEV_KERNEL_END), "kernel_end");
	assert_string_equal(cta_trace_event_name(CTA_TEV__COUNT), "?");
	assert_string_equal(cta_cancel_outcome_name(CTA_CANCEL_FAIL_PRIORITY), "fail_priority");
	assert_string_equal(cta_cancel_outcome_name(-1), "?");
}

static void pipe_path_is_written_in_place_not_replaced(void **state)
{
	/* Renaming a temporary onto a FIFO or device would replace the node
	 * (for /dev/null, for everyone); such paths are written directly. */
	struct cta_trace_header h;
	fill_header(&h);
	const char *fifo = path_in_dir("pipe");
	const char *out = path_in_dir("pipe.out");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "cat '%s' > '%s'", fifo, out);
	FILE *reader = popen(cmd, "r");
	assert_non_null(reader);
	cta_trace_writer *w;
	assert_int_equal(cta_trace_writer_open(&w, fifo, &h), 0);
	struct cta_trace_rec r = {.ev = CTA_TEV_LAUNCH, .kernel = 0, .block = CTA_TRACE_NONE};
	assert_int_equal(cta_trace_writer_add(w, &r), 0);
	assert_int_equal(cta_trace_writer_close(w, 1), 0);
	assert_int_equal(pclose(reader), 0);
	struct stat st;
	assert_int_equal(stat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_non_null(strstr(read_all(out), "\n#end records=1\n"));
}

static void output_depends_only_on_records(void **state)
{
	struct cta_trace_header h;
	fill_header(&h);
	const char *paths[2] = {path_in_dir("d1.trace"), path_in_dir("d2.trace")};
	for (int p = 0; p < 2; p++) {
		cta_trace_writer *w;
		assert_int_equal(cta_trace_writer_open(&w, paths[p], &h), 0);
		for (uint64_t i = 0; i < 5000; i++) {
			struct cta_trace_rec r = {.t_ns = i * 13,
			                          .ev = CTA_TEV_START,
			                          .kernel = 0,
			                          .block = i,
			                          .phys = i,
			                          .sm = i % 132,
			                          .arg = CTA_TRACE_NONE};
			assert_int_equal(cta_trace_writer_add(w, &r), 0);
		}
		assert_int_equal(cta_trace_writer_close(w, 1), 0);
	}
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", paths[0], paths[1]);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(round_trip_keeps_every_event_and_field),
	    cmocka_unit_test(written_file_has_documented_layout),
	    cmocka_unit_test(unclosed_writer_leaves_no_file_at_path),
	    cmocka_unit_test(two_writers_to_one_path_do_not_share_a_temporary),
	    cmocka_unit_test(incomplete_close_keeps_records_and_loads_as_incomplete),
	    cmocka_unit_test(writer_rejects_bad_header),
	    cmocka_unit_test(writer_refuses_records_the_reader_would_reject),
	    cmocka_unit_test(writer_reports_unwritable_directory),
	    cmocka_unit_test(text_control_characters_become_spaces),
	    cmocka_unit_test(reader_rejects_malformed_input_with_line_number),
	    cmocka_unit_test(reader_accepts_minimal_hand_written_trace),
	    cmocka_unit_test(reader_streams_traces_larger_than_its_window),
	    cmocka_unit_test(lean_read_renders_what_a_full_read_renders),
	    cmocka_unit_test(reader_reports_missing_file),
	    cmocka_unit_test(names_of_events_and_outcomes),
	    cmocka_unit_test(pipe_path_is_written_in_place_not_replaced),
	    cmocka_unit_test(output_depends_only_on_records),
	};
	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
