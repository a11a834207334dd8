/* Harness of block_reduce (reduce_body.h): in[i] = i mod 2^32 as the seeds'
 * a[i] = i, one element per thread by default (<<<ceil(n/256), 256>>>), and
 * a check of every block's partial sum and of the total. */
#include <stdlib.h>

#include "kcommon.h"
#include "reduce_body.h"

/* What verify needs, kept per run (kcommon.h says why). */
struct reduce_state {
	unsigned *in;
	long long n;
	unsigned long long *partial, *total;
	unsigned long long nblocks; /* partial sums allocated */
};

static const struct cta_param_desc reduce_params[] = {
    {"n", "1048576", "number of elements"},
    {"ns", "0", "virtual nanoseconds per element (per thread)"},
    {NULL, NULL, NULL},
};

/* Default threads per block; --block may pick any size up to 1024. */
#define REDUCE_BLOCK 256

static int reduce_setup(struct cta_harness *h)
{
	int64_t n = 0;
	int rc = cta__kparam_range(h, "n", 1, (int64_t)1 << 40, &n);
	if (rc)
		return rc;
	unsigned long long grid = ((unsigned long long)n + REDUCE_BLOCK - 1) / REDUCE_BLOCK;
	if (grid > 0x7fffffffull)
		return cta_harness_error(h, CTA_EINVAL, "n = %lld needs more than 2^31-1 blocks",
		                         (long long)n);
	struct reduce_state *S = cta__kstate_new(h, sizeof *S);
	if (!S)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate the harness state");
	S->n = n;
	/* Partial sums are sized for the default grid; a --grid override with
	 * more blocks is refused by verify (the kernel writes none past it). */
	S->nblocks = grid;
	S->in = cta_harness_alloc(h, (size_t)n * sizeof *S->in);
	S->partial = cta_harness_alloc(h, (size_t)grid * sizeof *S->partial);
	S->total = cta_harness_alloc(h, sizeof *S->total);
	if (!S->in || !S->partial || !S->total)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate %lld elements",
		                         (long long)n);
	for (long long i = 0; i < n; i++)
		S->in[i] = (unsigned)i;
	struct block_reduce_args a = {
	    .in = cta_harness_dev(h, S->in),
	    .n = n,
	    .partial = cta_harness_dev(h, S->partial),
	    .npartial = grid,
	    .total = cta_harness_dev(h, S->total),
	    .ns = (unsigned long long)cta_harness_int(h, "ns"),
	};
	struct cta_launch_cfg cfg = {
	    .grid = {(unsigned)grid, 1, 1},
	    .block = {REDUCE_BLOCK, 1, 1},
	    .smem_static = BLOCK_REDUCE_MAX_THREADS * sizeof(unsigned long long),
	};
	return cta_harness_launch(h, &block_reduce, &cfg, &a, sizeof a);
}

static int reduce_verify(struct cta_harness *h)
{
	const struct reduce_state *S = cta__kstate(h);
	if (!S)
		return cta_harness_error(h, CTA_ESTATE, "verify without a setup");
	const struct cta_launch_cfg *c = cta_harness_launched(h, 0);
	unsigned long long bsize = (unsigned long long)c->block[0] * c->block[1] * c->block[2];
	unsigned long long nblk = cta__klaunched_blocks(h);
	if (nblk > S->nblocks || bsize > BLOCK_REDUCE_MAX_THREADS)
		return cta_harness_fail(
		    h,
		    "launch of %llu blocks of %llu threads: block_reduce sizes its "
		    "outputs for at most %llu blocks of at most %d threads (set "
		    "--arg n instead)",
		    nblk, bsize, S->nblocks, BLOCK_REDUCE_MAX_THREADS);
	/* Block b owns the bsize-wide chunks b, b + nblk, b + 2*nblk, ... */
	unsigned long long *want = calloc(nblk, sizeof *want);
	if (!want)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate %llu sums", nblk);
	unsigned long long total = 0;
	for (long long i = 0; i < S->n; i++) {
		want[((unsigned long long)i / bsize) % nblk] += S->in[i];
		total += S->in[i];
	}
	int rc = 0;
	for (unsigned long long b = 0; b < nblk && !rc; b++)
		if (S->partial[b] != want[b])
			rc = cta_harness_fail(h, "partial[%llu]: expected %llu, got %llu", b,
			                      want[b], S->partial[b]);
	if (!rc && *S->total != total)
		rc = cta_harness_fail(h, "total: expected %llu, got %llu", total, *S->total);
	free(want);
	return rc;
}

/* Named for `ctasim bench`, whose loop-fission reference reads the input
 * and sizes of a prepared launch. */
static const struct cta_arg_field reduce_fields[] = {
    CTA_ARG_FIELD(struct block_reduce_args, in),
    CTA_ARG_FIELD(struct block_reduce_args, n),
    CTA_ARG_FIELD(struct block_reduce_args, partial),
    CTA_ARG_FIELD(struct block_reduce_args, npartial),
    CTA_ARG_FIELD(struct block_reduce_args, total),
    CTA_ARG_FIELD(struct block_reduce_args, ns),
    {NULL, 0, 0},
};
CTA_KERNEL_ARGS(block_reduce, reduce_fields)

static const struct cta_kernel_info reduce_info = {
    .name = "block_reduce",
    .summary = "shared-memory tree reduction with __syncthreads, partial sums and atomic total",
    .params = reduce_params,
    .setup = reduce_setup,
    .verify = reduce_verify,
};
CTA_HARNESS(reduce_info)
