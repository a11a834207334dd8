/* Unit tests of the position-keeping JSON reader (sim/util/json.c): values
 * and their positions, every syntax error's message, limits, the checked
 * getters' messages, and hostile input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctasim/errors.h"
#include "util/json.h"

static char err[512];

static struct cta__json_doc *parse_ok(const char *text)
{
	struct cta__json_doc *d = NULL;
	int rc = cta__json_parse(&d, text, strlen(text), "t.json", NULL, err, sizeof(err));
	if (rc)
		fail_msg("unexpected error %d: %s", rc, err);
	assert_non_null(d);
	return d;
}

/* Parses text that must fail and returns the message. */
static const char *parse_bad(const char *text, int want_code)
{
	struct cta__json_doc *d = (struct cta__json_doc *)1;
	int rc = cta__json_parse(&d, text, strlen(text), "t.json", NULL, err, sizeof(err));
	assert_int_equal(rc, want_code);
	assert_null(d);
	return err;
}

static void values_have_types_and_positions(void **state)
{
	(void)state;
	struct cta__json_doc *d = parse_ok("{\n  \"a\": 1,\n  \"b\": [true, null, -2.5],\n"
	                                   "\t\"c\": \"x\"\n}");
	const struct cta__json *r = cta__json_root(d);
	assert_int_equal(r->type, CTA__JSON_OBJECT);
	assert_int_equal(r->line, 1);
	assert_int_equal(r->col, 1);
	assert_int_equal(r->u.obj.n, 3);
	assert_string_equal(r->u.obj.m[0].key, "a");
	assert_int_equal(r->u.obj.m[0].line, 2);
	assert_int_equal(r->u.obj.m[0].col, 3);

	const struct cta__json *a = cta__json_get(r, "a");
	assert_int_equal(a->type, CTA__JSON_INT);
	assert_int_equal(a->u.i, 1);
	assert_int_equal(a->line, 2);
	assert_int_equal(a->col, 8);

	const struct cta__json *b = cta__json_get(r, "b");
	assert_int_equal(b->type, CTA__JSON_ARRAY);
	assert_int_equal(b->u.arr.n, 3);
	assert_int_equal(b->u.arr.items[0]->type, CTA__JSON_BOOL);
	assert_int_equal(b->u.arr.items[0]->u.b, 1);
	assert_int_equal(b->u.arr.items[1]->type, CTA__JSON_NULL);
	assert_int_equal(b->u.arr.items[2]->type, CTA__JSON_DOUBLE);
	assert_true(b->u.arr.items[2]->u.d == -2.5);
	assert_string_equal(b->u.arr.items[2]->num_text, "-2.5");
	assert_int_equal(b->u.arr.items[2]->col, 21);

	const struct cta__json *c = cta__json_get(r, "c");
	assert_int_equal(c->line, 4);
	assert_int_equal(c->col, 7); /* a tab counts as one column */
	assert_string_equal(c->u.str.s, "x");
	assert_null(cta__json_get(r, "missing"));
	assert_null(cta__json_get(a, "a"));
	cta__json_free(d);
}

static void members_keep_file_order(void **state)
{
	(void)state;
	struct cta__json_doc *d = parse_ok("{\"z\":1,\"a\":2,\"m\":3}");
	const struct cta__json *r = cta__json_root(d);
	assert_string_equal(r->u.obj.m[0].key, "z");
	assert_string_equal(r->u.obj.m[1].key, "a");
	assert_string_equal(r->u.obj.m[2].key, "m");
	cta__json_free(d);
}

static void integers_are_exact_in_int64(void **state)
{
	(void)state;
	struct cta__json_doc *d =
	    parse_ok("[9223372036854775807, -9223372036854775808, 9223372036854775808, 0, -0, "
	             "1e3, 18446744073709551615]");
	const struct cta__json *r = cta__json_root(d);
	assert_int_equal(r->u.arr.items[0]->type, CTA__JSON_INT);
	assert_true(r->u.arr.items[0]->u.i == INT64_MAX);
	assert_int_equal(r->u.arr.items[1]->type, CTA__JSON_INT);
	assert_true(r->u.arr.items[1]->u.i == INT64_MIN);
	/* One past int64: a double, still exact as text. */
	assert_int_equal(r->u.arr.items[2]->type, CTA__JSON_DOUBLE);
	assert_string_equal(r->u.arr.items[2]->num_text, "9223372036854775808");
	assert_int_equal(r->u.arr.items[3]->u.i, 0);
	assert_int_equal(r->u.arr.items[4]->type, CTA__JSON_INT);
	assert_int_equal(r->u.arr.items[5]->type, CTA__JSON_DOUBLE);
	assert_true(r->u.arr.items[5]->u.d == 1000.0);
	assert_int_equal(r->u.arr.items[6]->type, CTA__JSON_DOUBLE);
	cta__json_free(d);
}

static void string_escapes_decode_to_utf8(void **state)
{
	(void)state;
	struct cta__json_doc *d =
	    parse_ok("[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\", \"\\u00e9\\u20AC\", "
	             "\"\\ud83d\\ude00\", \"\xc3\xa9\", \"nul\\u0000x\"]");
	const struct cta__json *r = cta__json_root(d);
	assert_string_equal(r->u.arr.items[0]->u.str.s, "a\"b\\c/d\b\f\n\r\t");
	assert_string_equal(r->u.arr.items[1]->u.str.s, "\xc3\xa9\xe2\x82\xac");
	assert_string_equal(r->u.arr.items[2]->u.str.s, "\xf0\x9f\x98\x80");
	assert_string_equal(r->u.arr.items[3]->u.str.s, "\xc3\xa9");
	assert_int_equal(r->u.arr.items[4]->u.str.len, 5);
	assert_memory_equal(r->u.arr.items[4]->u.str.s, "nul\0x", 6);
	cta__json_free(d);
}

static void columns_count_characters_not_bytes(void **state)
{
	(void)state;
	struct cta__json_doc *d = parse_ok("[\"\xc3\xa9\xc3\xa9\", 7]");
	const struct cta__json *r = cta__json_root(d);
	assert_int_equal(r->u.arr.items[1]->col, 8);
	cta__json_free(d);
}

static void byte_order_mark_is_skipped(void **state)
{
	(void)state;
	struct cta__json_doc *d = parse_ok("\xEF\xBB\xBF{\"a\": 1}");
	assert_int_equal(cta__json_root(d)->type, CTA__JSON_OBJECT);
	assert_int_equal(cta__json_root(d)->col, 1); /* editors do not show the mark */
	cta__json_free(d);
}

static void scalar_and_empty_roots_parse(void **state)
{
	(void)state;
	struct cta__json_doc *d = parse_ok("  42 \n");
	assert_int_equal(cta__json_root(d)->u.i, 42);
	cta__json_free(d);
	d = parse_ok("[]");
	assert_int_equal(cta__json_root(d)->u.arr.n, 0);
	cta__json_free(d);
	d = parse_ok("{ }");
	assert_int_equal(cta__json_root(d)->u.obj.n, 0);
	cta__json_free(d);
}

static void syntax_errors_name_line_and_column(void **state)
{
	(void)state;
	static const struct {
		const char *text, *msg;
	} cases[] = {
	    {"", "t.json:1:1: empty input (expected a JSON value)"},
	    {"{\"a\": 1,\n}", "t.json:2:1: trailing comma before '}'"},
	    {"[1, 2,]", "t.json:1:7: trailing comma before ']'"},
	    {"{\"a\" 1}", "t.json:1:6: expected ':' after a key, got '1'"},
	    {"{\"a\": 1 \"b\": 2}",
	     "t.json:1:9: expected ',' or '}' after an object member, got '\"'"},
	    {"[1 2]", "t.json:1:4: expected ',' or ']' in an array, got '2'"},
	    {"{a: 1}", "t.json:1:2: expected a key in double quotes, got 'a'"},
	    {"{'a': 1}", "t.json:1:2: keys must be in double quotes, not single quotes"},
	    {"['a']", "t.json:1:2: strings must be in double quotes, not single quotes"},
	    {"{\"a\": 1 // note\n}", "t.json:1:9: comments are not allowed in JSON"},
	    {"[1 /* two */]", "t.json:1:4: comments are not allowed in JSON"},
	    {"// note\n{}", "t.json:1:1: comments are not allowed in JSON"},
	    {"[01]", "t.json:1:2: numbers must not have leading zeros"},
	    {"[1.]", "t.json:1:4: expected a digit after '.'"},
	    {"[1e]", "t.json:1:4: expected a digit in the exponent"},
	    {"[-]", "t.json:1:3: expected a digit after '-'"},
	    {"[1e999]", "t.json:1:2: number 1e999 is too large"},
	    {"[True]", "t.json:1:2: unexpected word 'True' (expected a value: true, false, null, "
	               "a number, a string, an array or an object)"},
	    {"[nan]", "t.json:1:2: unexpected word 'nan' (expected a value: true, false, null, a "
	              "number, a string, an array or an object)"},
	    {"\n\n  \"abc", "t.json:3:3: unterminated string (end of input before the closing "
	                    "'\"')"},
	    {"[\"ab\ncd\"]", "t.json:1:2: unterminated string (a line break inside a string must "
	                     "be written \\n)"},
	    {"[\"a\tb\"]", "t.json:1:4: control character 0x09 in a string (write it as \\u0009)"},
	    {"[\"\\x\"]", "t.json:1:3: invalid escape: backslash followed by 'x'"},
	    {"[\"\\u12G4\"]", "t.json:1:7: expected 4 hex digits after \\u"},
	    {"[\"\\udc00\"]",
	     "t.json:1:3: \\uDC00 is a low surrogate without a high surrogate before it"},
	    {"[\"\\ud800x\"]",
	     "t.json:1:3: \\uD800 is a high surrogate not followed by a \\u low surrogate"},
	    {"[\"\\ud800\\u0041\"]",
	     "t.json:1:3: \\uD800 is a high surrogate not followed by a low surrogate"},
	    {"[\"\xff\"]", "t.json:1:3: invalid UTF-8 byte 0xFF in a string"},
	    {"[\"\xc0\xaf\"]", "t.json:1:3: invalid UTF-8 byte 0xC0 in a string"},
	    {"[\"\xed\xa0\x80\"]", "t.json:1:3: invalid UTF-8 byte 0xED in a string"},
	    {"[\"\xe2\x82\"]", "t.json:1:3: invalid UTF-8 byte 0xE2 in a string"},
	    {"{} x", "t.json:1:4: unexpected 'x' after the end of the JSON value"},
	    {"{}{}", "t.json:1:3: unexpected '{' after the end of the JSON value"},
	    {"{\n  \"a\": [1,\n", "t.json:2:8: array is not closed (end of input before its ']')"},
	    {"{\"a\": 1", "t.json:1:1: object is not closed (end of input before its '}')"},
	    {"{\"a\":", "t.json:1:6: unexpected end of input (expected a value)"},
	    {"[\x01]", "t.json:1:2: unexpected byte 0x01 (expected a value)"},
	    {"{\"a\": 1,\n \"b\": 2,\n \"a\": 3}",
	     "t.json:3:2: duplicate key 'a' (first at line 1 column 2)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cta__json_doc *d = NULL;
		int rc = cta__json_parse(&d, cases[i].text, strlen(cases[i].text), "t.json", NULL,
		                         err, sizeof(err));
		if (rc != CTA_EPARSE || strcmp(err, cases[i].msg) != 0)
			fail_msg("case %zu (%s):\n got  %d '%s'\n want '%s'", i, cases[i].text, rc,
			         err, cases[i].msg);
		assert_null(d);
	}
}

static void duplicate_reported_is_the_first_repeat_in_file_order(void **state)
{
	(void)state;
	/* "b" repeats before "a" does, although "a" sorts first. */
	const char *m =
	    parse_bad("{\"a\":1,\"b\":2,\"b\":3,\"a\":4,\"c\":5,\"d\":6,\"e\":7,\"f\":8,\"g\":9}",
	              CTA_EPARSE);
	assert_string_equal(m, "t.json:1:14: duplicate key 'b' (first at line 1 column 8)");
}

static void nesting_deeper_than_the_limit_is_refused(void **state)
{
	(void)state;
	/* A million brackets must be refused early, not overflow the stack. */
	size_t n = 1000000;
	char *s = malloc(n + 1);
	assert_non_null(s);
	memset(s, '[', n);
	s[n] = '\0';
	struct cta__json_doc *d = NULL;
	int rc = cta__json_parse(&d, s, n, "deep.json", NULL, err, sizeof(err));
	assert_int_equal(rc, CTA_ERANGE);
	assert_string_equal(err, "deep.json:1:65: nesting deeper than 64 levels");
	free(s);

	struct cta__json_limits lim = {.max_depth = 3};
	rc = cta__json_parse(&d, "[[[1]]]", 7, "t.json", &lim, err, sizeof(err));
	assert_int_equal(rc, 0);
	cta__json_free(d);
	rc = cta__json_parse(&d, "[[[[1]]]]", 9, "t.json", &lim, err, sizeof(err));
	assert_int_equal(rc, CTA_ERANGE);
	assert_string_equal(err, "t.json:1:4: nesting deeper than 3 levels");
}

static void input_larger_than_the_limit_is_refused(void **state)
{
	(void)state;
	struct cta__json_limits lim = {.max_bytes = 8};
	struct cta__json_doc *d = NULL;
	int rc = cta__json_parse(&d, "[1,2,3,4,5]", 11, "t.json", &lim, err, sizeof(err));
	assert_int_equal(rc, CTA_ERANGE);
	assert_string_equal(err, "t.json:1:1: input is 11 bytes, more than the limit of 8");
	assert_null(d);
}

static void parsing_never_reads_past_the_given_length(void **state)
{
	(void)state;
	/* Every prefix of a valid document is parsed from its own exact-size
	 * heap copy, so ASan flags any read past the end. */
	const char *full = "{\"k\": [1, -2.5e3, true, false, null, \"s\\u00e9\\ud83d\\ude00\"], "
	                   "\"o\": {}}";
	size_t n = strlen(full);
	for (size_t len = 0; len <= n; len++) {
		char *copy = malloc(len ? len : 1);
		assert_non_null(copy);
		memcpy(copy, full, len);
		struct cta__json_doc *d = NULL;
		int rc = cta__json_parse(&d, copy, len, "t.json", NULL, err, sizeof(err));
		assert_int_equal(rc == 0, len == n);
		cta__json_free(d);
		free(copy);
	}
}

static void random_bytes_never_crash(void **state)
{
	(void)state;
	/* Mutations of a valid document: whatever comes out, the parser must
	 * return a result and a message, and never touch bytes it was not
	 * given. */
	const char *seed = "{\"kernels\": [{\"harness\": \"spin\", \"args\": {\"ns\": 1000}, "
	                   "\"grid\": [4, 1, 1]}], \"s\": \"\\u00e9\"}";
	const char alphabet[] = "{}[]\":,\\u0123456789eE.-+ tfnalrsx\n\xc3\xa9\xff";
	size_t n = strlen(seed);
	uint32_t rng = 12345;
	for (int iter = 0; iter < 20000; iter++) {
		char *s = malloc(n);
		assert_non_null(s);
		memcpy(s, seed, n);
		int muts = 1 + iter % 4;
		for (int k = 0; k < muts; k++) {
			rng = rng * 1103515245u + 12345u;
			size_t pos = (rng >> 8) % n;
			rng = rng * 1103515245u + 12345u;
			s[pos] = alphabet[(rng >> 8) % (sizeof(alphabet) - 1)];
		}
		struct cta__json_doc *d = NULL;
		err[0] = '\0';
		int rc = cta__json_parse(&d, s, n, "f.json", NULL, err, sizeof(err));
		if (rc == 0)
			assert_non_null(d);
		else
			assert_true(strncmp(err, "f.json:", 7) == 0);
		cta__json_free(d);
		free(s);
	}
}

static void getters_name_the_field_and_the_types(void **state)
{
	(void)state;
	struct cta__json_doc *d = parse_ok("{\n\"i\": 5,\n\"s\": \"x\",\n\"d\": 2.5,\n\"e\": 1e6,\n"
	                                   "\"b\": true,\n\"big\": 1e300,\n\"empty\": \"\"}");
	const struct cta__json *r = cta__json_root(d);
	struct cta__json_ctx c = {"sc.json", err, sizeof(err)};
	int64_t x = 0;

	assert_int_equal(cta__json_want_int(&c, cta__json_get(r, "i"), "k[2].i", 0, 10, &x), 0);
	assert_int_equal(x, 5);
	assert_int_equal(cta__json_want_int(&c, cta__json_get(r, "e"), "e", 0, INT64_MAX, &x), 0);
	assert_int_equal(x, 1000000);

	assert_int_equal(
	    cta__json_want_int(&c, cta__json_get(r, "s"), "kernels[2].priority", 0, 10, &x),
	    CTA_EPARSE);
	assert_string_equal(err,
	                    "sc.json:3: field 'kernels[2].priority': expected an integer, got a "
	                    "string");
	assert_int_equal(cta__json_want_int(&c, cta__json_get(r, "d"), "d", 0, 10, &x), CTA_EPARSE);
	assert_string_equal(err, "sc.json:4: field 'd': expected an integer, got 2.5");
	assert_int_equal(cta__json_want_int(&c, cta__json_get(r, "i"), "i", -5, 0, &x), CTA_ERANGE);
	assert_string_equal(err, "sc.json:2: field 'i': 5 is out of range [-5, 0]");
	assert_int_equal(cta__json_want_int(&c, cta__json_get(r, "i"), "i", 6, INT64_MAX, &x),
	                 CTA_ERANGE);
	assert_string_equal(err, "sc.json:2: field 'i': 5 is less than the minimum 6");
	assert_int_equal(cta__json_want_int(&c, cta__json_get(r, "i"), "i", INT64_MIN, 4, &x),
	                 CTA_ERANGE);
	assert_string_equal(err, "sc.json:2: field 'i': 5 is more than the maximum 4");
	assert_int_equal(cta__json_want_int(&c, cta__json_get(r, "big"), "big", 0, INT64_MAX, &x),
	                 CTA_ERANGE);
	assert_string_equal(err,
	                    "sc.json:7: field 'big': 1e300 is too large to be an exact integer");

	double dv = 0;
	assert_int_equal(cta__json_want_double(&c, cta__json_get(r, "i"), "i", &dv), 0);
	assert_true(dv == 5.0);
	assert_int_equal(cta__json_want_double(&c, cta__json_get(r, "b"), "b", &dv), CTA_EPARSE);
	assert_string_equal(err, "sc.json:6: field 'b': expected a number, got a boolean");

	int bv = 0;
	assert_int_equal(cta__json_want_bool(&c, cta__json_get(r, "b"), "b", &bv), 0);
	assert_int_equal(bv, 1);

	char buf[4];
	assert_int_equal(cta__json_want_string(&c, cta__json_get(r, "s"), "s", 0, buf, sizeof(buf)),
	                 0);
	assert_string_equal(buf, "x");
	assert_int_equal(
	    cta__json_want_string(&c, cta__json_get(r, "empty"), "empty", 0, buf, sizeof(buf)),
	    CTA_EPARSE);
	assert_string_equal(err, "sc.json:8: field 'empty': must not be empty");
	assert_int_equal(
	    cta__json_want_string(&c, cta__json_get(r, "empty"), "empty", 1, buf, sizeof(buf)), 0);
	assert_int_equal(cta__json_want(&c, r, "", CTA__JSON_ARRAY), CTA_EPARSE);
	assert_string_equal(err, "sc.json:1: expected an array, got an object");
	cta__json_free(d);
}

static void long_strings_are_refused_with_their_length(void **state)
{
	(void)state;
	struct cta__json_doc *d = parse_ok("{\"name\": \"abcdefgh\"}");
	struct cta__json_ctx c = {"sc.json", err, sizeof(err)};
	char buf[8];
	assert_int_equal(cta__json_want_string(&c, cta__json_get(cta__json_root(d), "name"),
	                                       "streams[0].name", 0, buf, sizeof(buf)),
	                 CTA_ERANGE);
	assert_string_equal(err, "sc.json:1: field 'streams[0].name': string is 8 bytes long, "
	                         "more than the maximum 7");
	cta__json_free(d);
}

static void unknown_fields_get_a_suggestion_when_close(void **state)
{
	(void)state;
	static const char *const known[] = {"name", "priority", "release_ns", NULL};
	struct cta__json_ctx c = {"sc.json", err, sizeof(err)};
	struct cta__json_doc *d = parse_ok("{\"name\": \"a\",\n \"priorty\": 1}");
	assert_int_equal(cta__json_check_fields(&c, cta__json_root(d), "streams[1]", known),
	                 CTA_EPARSE);
	assert_string_equal(err, "sc.json:2: field 'streams[1].priorty': unknown field (did you "
	                         "mean 'priority'?)");
	cta__json_free(d);

	d = parse_ok("{\"colour\": 1}");
	assert_int_equal(cta__json_check_fields(&c, cta__json_root(d), "", known), CTA_EPARSE);
	assert_string_equal(err, "sc.json:1: field 'colour': unknown field (known: name, "
	                         "priority, release_ns)");
	cta__json_free(d);

	d = parse_ok("{\"RELEASE_NS\": 1, \"name\": 2}");
	assert_int_equal(cta__json_check_fields(&c, cta__json_root(d), "k", known), CTA_EPARSE);
	assert_string_equal(
	    err, "sc.json:1: field 'k.RELEASE_NS': unknown field (did you mean 'release_ns'?)");
	cta__json_free(d);

	d = parse_ok("{\"name\": 1, \"priority\": 2}");
	assert_int_equal(cta__json_check_fields(&c, cta__json_root(d), "k", known), 0);
	cta__json_free(d);
}

static void suggestions_stay_away_from_unrelated_names(void **state)
{
	(void)state;
	static const char *const known[] = {"grid", "block", "stream", "label", NULL};
	assert_string_equal(cta__json_suggest("grd", known), "grid");
	assert_string_equal(cta__json_suggest("steram", known), "stream");
	assert_string_equal(cta__json_suggest("lable", known), "label"); /* a swap is one edit */
	assert_string_equal(cta__json_suggest("BLOCK", known), "block");
	assert_null(cta__json_suggest("id", known));
	assert_null(cta__json_suggest("priority", known));
	assert_null(cta__json_suggest("", known));
}

static void paths_are_built_and_cleaned(void **state)
{
	(void)state;
	char p[64];
	cta__json_path_member(p, sizeof(p), "", "seed");
	assert_string_equal(p, "seed");
	cta__json_path_index(p, sizeof(p), "kernels", 2);
	cta__json_path_member(p, sizeof(p), p, "priority");
	assert_string_equal(p, "kernels[2].priority");
	cta__json_path_member(p, sizeof(p), "args", "a\nb'c");
	assert_string_equal(p, "args.a?b?c");
	char small[8];
	cta__json_path_member(small, sizeof(small), "abcdef", "ghij");
	assert_string_equal(small, "abcd...");
}

static void load_reports_a_missing_file(void **state)
{
	(void)state;
	struct cta__json_doc *d = NULL;
	int rc = cta__json_load(&d, "/nonexistent/x.json", NULL, err, sizeof(err));
	assert_int_equal(rc, CTA_ENOTFOUND);
	assert_string_equal(err, "/nonexistent/x.json: No such file or directory");
	assert_null(d);
}

static void load_reads_a_file_and_names_it_in_errors(void **state)
{
	(void)state;
	char path[] = "/tmp/ctasim_json_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs("{\n  \"a\": [1,\n  2,\n  ]\n}\n", f);
	fclose(f);
	struct cta__json_doc *d = NULL;
	int rc = cta__json_load(&d, path, NULL, err, sizeof(err));
	assert_int_equal(rc, CTA_EPARSE);
	char want[128];
	snprintf(want, sizeof(want), "%s:4:3: trailing comma before ']'", path);
	assert_string_equal(err, want);
	struct cta__json_limits lim = {.max_bytes = 4};
	rc = cta__json_load(&d, path, &lim, err, sizeof(err));
	assert_int_equal(rc, CTA_ERANGE);
	remove(path);
}

static void many_values_parse_in_bounded_time(void **state)
{
	(void)state;
	/* An object of 100k keys, all distinct but one at the end. */
	size_t nkeys = 100000;
	size_t cap = nkeys * 16 + 64, len = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	s[len++] = '{';
	for (size_t i = 0; i < nkeys; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s\"k%zu\":%zu", i ? "," : "", i, i);
	len += (size_t)snprintf(s + len, cap - len, ",\"k7\":0}");
	struct cta__json_doc *d = NULL;
	int rc = cta__json_parse(&d, s, len, "big.json", NULL, err, sizeof(err));
	assert_int_equal(rc, CTA_EPARSE);
	assert_non_null(strstr(err, "duplicate key 'k7' (first at line 1 column 51)"));
	s[len - 8] = '}';
	rc = cta__json_parse(&d, s, len - 7, "big.json", NULL, err, sizeof(err));
	assert_int_equal(rc, 0);
	assert_int_equal(cta__json_root(d)->u.obj.n, nkeys);
	assert_int_equal(cta__json_get(cta__json_root(d), "k99999")->u.i, 99999);
	cta__json_free(d);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(values_have_types_and_positions),
	    cmocka_unit_test(members_keep_file_order),
	    cmocka_unit_test(integers_are_exact_in_int64),
	    cmocka_unit_test(string_escapes_decode_to_utf8),
	    cmocka_unit_test(columns_count_characters_not_bytes),
	    cmocka_unit_test(byte_order_mark_is_skipped),
	    cmocka_unit_test(scalar_and_empty_roots_parse),
	    cmocka_unit_test(syntax_errors_name_line_and_column),
	    cmocka_unit_test(duplicate_reported_is_the_first_repeat_in_file_order),
	    cmocka_unit_test(nesting_deeper_than_the_limit_is_refused),
	    cmocka_unit_test(input_larger_than_the_limit_is_refused),
	    cmocka_unit_test(parsing_never_reads_past_the_given_length),
	    cmocka_unit_test(random_bytes_never_crash),
	    cmocka_unit_test(getters_name_the_field_and_the_types),
	    cmocka_unit_test(long_strings_are_refused_with_their_length),
	    cmocka_unit_test(unknown_fields_get_a_suggestion_when_close),
	    cmocka_unit_test(suggestions_stay_away_from_unrelated_names),
	    cmocka_unit_test(paths_are_built_and_cleaned),
	    cmocka_unit_test(load_reports_a_missing_file),
	    cmocka_unit_test(load_reads_a_file_and_names_it_in_errors),
	    cmocka_unit_test(many_values_parse_in_bounded_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
