/* The harness of tests/cli/kc_user_body.h for tests/cli/kc_load.sh: a user
 * kernel built by ctasim-build-kernel (body through the kernel compiler
 * where it is installed) and run with `ctasim run --load`. kc_slots is
 * checked against a sequential reference; the others print a checksum of
 * their outputs, which the test compares between the two paths. */
#include <stdlib.h>

#include "ctasim/harness.h"
#include "kc_user_body.h"

#define KC_BLOCK 64

static const struct cta_param_desc kc_params[] = {
    {"blocks", "40", "blocks in the grid (64 threads each)"},
    {"rounds", "3", "barrier-loop trips; kc_one_trip: the stride is (rounds + 1) * 64"},
    {"active", "64", "kc_early_exit: threads of a block that reach the barriers"},
    {"valid", "1",
     "kc_two_barriers: 0 sends odd threads to another barrier; kc_guards: m; kc_one_trip: "
     "the start's offset"},
    {NULL, NULL, NULL},
};

static struct {
	int *in, *out;
	int blocks, rounds, valid;
} S;

static int kc_setup_for(struct cta_harness *h, const struct cta_kernel_def *k)
{
	int64_t blocks = cta_harness_int(h, "blocks"), rounds = cta_harness_int(h, "rounds");
	int64_t active = cta_harness_int(h, "active"), valid = cta_harness_int(h, "valid");
	if (blocks < 1 || blocks > 100000 || rounds < 0 || rounds > 1000 || active < 1 ||
	    active > KC_BLOCK)
		return cta_harness_fail(h, "blocks, rounds or active out of range");
	size_t n = (size_t)blocks * KC_BLOCK;
	S.in = cta_harness_alloc(h, n * sizeof(int));
	S.out = cta_harness_alloc(h, n * sizeof(int));
	if (!S.in || !S.out)
		return cta_harness_fail(h, "out of memory");
	for (size_t i = 0; i < n; i++)
		S.in[i] = (int)(i * 7 % 101) - 50;
	S.blocks = (int)blocks;
	S.rounds = (int)rounds;
	S.valid = (int)valid;
	struct kc_args a = {cta_harness_dev(h, S.in), cta_harness_dev(h, S.out), (int)rounds,
	                    (int)active, (int)valid};
	struct cta_launch_cfg cfg = {.grid = {(unsigned)blocks, 1, 1},
	                             .block = {KC_BLOCK, 1, 1},
	                             .smem_static = 1024 * sizeof(int)};
	if (k == &kc_cluster_order) {
		if (blocks % 2)
			return cta_harness_fail(
			    h, "kc_cluster_order: blocks must be even (clusters of 2)");
		cfg.cluster[0] = 2;
		cfg.cluster[1] = cfg.cluster[2] = 1;
	}
	return cta_harness_launch(h, k, &cfg, &a, sizeof a);
}

static int kc_launched_ok(struct cta_harness *h)
{
	const struct cta_launch_cfg *c = cta_harness_launched(h, 0);
	if (c->block[0] * c->block[1] * c->block[2] != KC_BLOCK || c->grid[0] != (unsigned)S.blocks)
		return cta_harness_fail(h, "blocks of %d threads and the default grid expected",
		                        KC_BLOCK);
	return 0;
}

static int kc_checksum(struct cta_harness *h)
{
	int rc = kc_launched_ok(h);
	if (rc)
		return rc;
	unsigned long long sum = 0;
	for (size_t i = 0; i < (size_t)S.blocks * KC_BLOCK; i++)
		sum = sum * 31 + (unsigned)S.out[i];
	return cta_harness_fail(h, "checksum %llu (compared between the two paths)", sum);
}

static int kc_slots_verify(struct cta_harness *h)
{
	int rc = kc_launched_ok(h);
	if (rc)
		return rc;
	int acc[KC_BLOCK], s[KC_BLOCK], local[KC_BLOCK][4];
	for (int b = 0; b < S.blocks; b++) {
		const int *in = S.in + (size_t)b * KC_BLOCK;
		for (int t = 0; t < KC_BLOCK; t++) {
			acc[t] = in[t];
			for (int k = 0; k < 4; k++)
				local[t][k] = acc[t] * (k + 1);
		}
		for (int r = 0; r < S.rounds; r++) {
			for (int t = 0; t < KC_BLOCK; t++)
				s[t] = acc[t];
			for (int t = 0; t < KC_BLOCK; t++) {
				acc[t] += s[(t + 1) % KC_BLOCK] + local[t][r % 4];
				local[t][r % 4] ^= t;
			}
		}
		for (int t = 0; t < KC_BLOCK; t++)
			if (S.out[(size_t)b * KC_BLOCK + t] != acc[t])
				return cta_harness_fail(h, "out[%d]: expected %d, got %d",
				                        b * KC_BLOCK + t, acc[t],
				                        S.out[(size_t)b * KC_BLOCK + t]);
	}
	return 0;
}

/* kc_smem_rank, kc_smem_any: each thread got its right neighbour's input,
 * and read zeros in the rest of its block's shared memory. */
static int kc_smem_verify(struct cta_harness *h)
{
	int rc = kc_launched_ok(h);
	if (rc)
		return rc;
	for (int b = 0; b < S.blocks; b++)
		for (int t = 0; t < KC_BLOCK; t++) {
			size_t i = (size_t)b * KC_BLOCK + t;
			int want = S.in[(size_t)b * KC_BLOCK + (t + 1) % KC_BLOCK];
			if (S.out[i] != want)
				return cta_harness_fail(h, "out[%zu]: expected %d, got %d", i, want,
				                        S.out[i]);
		}
	return 0;
}

/* kc_guards against the same steps in plain C. */
static int kc_guards_verify(struct cta_harness *h)
{
	int rc = kc_launched_ok(h);
	if (rc)
		return rc;
	unsigned k = (unsigned)S.rounds, m = (unsigned)S.valid, n = KC_BLOCK;
	int s[KC_BLOCK];
	for (int b = 0; b < S.blocks; b++) {
		for (unsigned t = 0; t < n; t++)
			s[t] = S.in[(size_t)b * n + t];
		for (unsigned t = 0; t < n; t++)
			if (t < k && t + k < n)
				s[t] += s[t + k] * 3 + 1;
		for (unsigned t = 0; t < n; t++)
			if (t + m < 0xfffffff0u)
				s[t] ^= 0x55;
		for (unsigned t = 0; t < n; t++)
			if (S.out[(size_t)b * n + t] != s[t])
				return cta_harness_fail(h, "out[%zu]: expected %d, got %d",
				                        (size_t)b * n + t, s[t],
				                        S.out[(size_t)b * n + t]);
	}
	return 0;
}

/* kc_inner_loops against the same loops in plain C. */
static int kc_inner_loops_verify(struct cta_harness *h)
{
	int rc = kc_launched_ok(h);
	if (rc)
		return rc;
	unsigned n = KC_BLOCK;
	int s[KC_BLOCK];
	for (int b = 0; b < S.blocks; b++) {
		const int *in = S.in + (size_t)b * n;
		for (unsigned t = 0; t < n; t++) {
			int sum = 0;
			for (unsigned i = t; i < t + t % 5 + (unsigned)S.rounds; i++)
				sum += in[i % n] * (int)(i - t + 1);
			s[t] = sum;
		}
		for (unsigned t = 0; t < n; t++) {
			int acc = 0;
			for (unsigned k = 0; k <= t % 4; k++)
				acc += s[(t + k) % n];
			if (S.out[(size_t)b * n + t] != acc)
				return cta_harness_fail(h, "out[%zu]: expected %d, got %d",
				                        (size_t)b * n + t, acc,
				                        S.out[(size_t)b * n + t]);
		}
	}
	return 0;
}

/* kc_one_trip against the same loop in plain C. */
static int kc_one_trip_verify(struct cta_harness *h)
{
	int rc = kc_launched_ok(h);
	if (rc)
		return rc;
	unsigned n = KC_BLOCK, total = (unsigned)S.blocks * n;
	unsigned stride = ((unsigned)S.rounds + 1) * 64;
	int s[KC_BLOCK], s2[KC_BLOCK];
	for (int b = 0; b < S.blocks; b++) {
		for (unsigned t = 0; t < n; t++) {
			int sum = 0, sum2 = 0;
			for (unsigned i = (unsigned)b * n + t + (unsigned)S.valid; i < total;
			     i += stride)
				sum += S.in[i] + 1;
			for (int j = (int)((unsigned)b * n + t) + S.valid; j < (int)total;
			     j += (int)stride)
				if (j >= 0)
					sum2 += S.in[j] * 2;
			s[t] = sum;
			s2[t] = sum2;
		}
		for (unsigned t = 0; t < n; t++) {
			int want = s[(t + 1) % n] + s2[(t + 2) % n];
			if (S.out[(size_t)b * n + t] != want)
				return cta_harness_fail(h, "out[%zu]: expected %d, got %d",
				                        (size_t)b * n + t, want,
				                        S.out[(size_t)b * n + t]);
		}
	}
	return 0;
}

static int kc_slots_setup(struct cta_harness *h)
{
	return kc_setup_for(h, &kc_slots);
}
static int kc_early_exit_setup(struct cta_harness *h)
{
	return kc_setup_for(h, &kc_early_exit);
}
static int kc_two_barriers_setup(struct cta_harness *h)
{
	return kc_setup_for(h, &kc_two_barriers);
}

static int kc_smem_rank_setup(struct cta_harness *h)
{
	return kc_setup_for(h, &kc_smem_rank);
}
static int kc_smem_any_setup(struct cta_harness *h)
{
	return kc_setup_for(h, &kc_smem_any);
}

static int kc_guards_setup(struct cta_harness *h)
{
	return kc_setup_for(h, &kc_guards);
}

static int kc_inner_loops_setup(struct cta_harness *h)
{
	return kc_setup_for(h, &kc_inner_loops);
}

static int kc_one_trip_setup(struct cta_harness *h)
{
	return kc_setup_for(h, &kc_one_trip);
}

static int kc_steal_setup(struct cta_harness *h)
{
	return kc_setup_for(h, &kc_steal);
}

static int kc_cluster_order_setup(struct cta_harness *h)
{
	return kc_setup_for(h, &kc_cluster_order);
}

static const struct cta_kernel_info kc_slots_info = {
    .name = "kc_slots",
    .summary = "test kernel: per-thread values and a local array across barriers in a loop",
    .params = kc_params,
    .setup = kc_slots_setup,
    .verify = kc_slots_verify,
};
CTA_HARNESS(kc_slots_info)
static const struct cta_kernel_info kc_early_exit_info = {
    .name = "kc_early_exit",
    .summary = "test kernel: threads past `active` end before the barriers",
    .params = kc_params,
    .setup = kc_early_exit_setup,
    .verify = kc_checksum,
};
CTA_HARNESS(kc_early_exit_info)
static const struct cta_kernel_info kc_two_barriers_info = {
    .name = "kc_two_barriers",
    .summary = "test kernel: with valid=0, odd threads wait at another __syncthreads",
    .params = kc_params,
    .setup = kc_two_barriers_setup,
    .verify = kc_checksum,
};
CTA_HARNESS(kc_two_barriers_info)
static const struct cta_kernel_info kc_steal_info = {
    .name = "kc_steal",
    .summary = "test kernel: try_cancel_blocks led by the last thread, values live across it",
    .params = kc_params,
    .flags = CTA_KI_CLC,
    .setup = kc_steal_setup,
    .verify = kc_checksum,
};
CTA_HARNESS(kc_steal_info)
static const struct cta_kernel_info kc_smem_rank_info = {
    .name = "kc_smem_rank",
    .summary = "test kernel: shared memory a block never wrote reads zero (writes by rank)",
    .params = kc_params,
    .setup = kc_smem_rank_setup,
    .verify = kc_smem_verify,
};
CTA_HARNESS(kc_smem_rank_info)
static const struct cta_kernel_info kc_smem_any_info = {
    .name = "kc_smem_any",
    .summary = "test kernel: shared memory a block never wrote reads zero (any writes)",
    .params = kc_params,
    .setup = kc_smem_any_setup,
    .verify = kc_smem_verify,
};
CTA_HARNESS(kc_smem_any_info)
static const struct cta_kernel_info kc_guards_info = {
    .name = "kc_guards",
    .summary = "test kernel: threads pass tests on their index, one that wraps",
    .params = kc_params,
    .setup = kc_guards_setup,
    .verify = kc_guards_verify,
};
CTA_HARNESS(kc_guards_info)
static const struct cta_kernel_info kc_inner_loops_info = {
    .name = "kc_inner_loops",
    .summary = "test kernel: loops of different lengths inside each thread's regions",
    .params = kc_params,
    .setup = kc_inner_loops_setup,
    .verify = kc_inner_loops_verify,
};
CTA_HARNESS(kc_inner_loops_info)
static const struct cta_kernel_info kc_one_trip_info = {
    .name = "kc_one_trip",
    .summary = "test kernel: a grid-stride loop of one trip a thread, or more, or none",
    .params = kc_params,
    .setup = kc_one_trip_setup,
    .verify = kc_one_trip_verify,
};
CTA_HARNESS(kc_one_trip_info)
static const struct cta_kernel_info kc_cluster_order_info = {
    .name = "kc_cluster_order",
    .summary = "test kernel: the order of a cluster's threads after each cluster barrier",
    .params = kc_params,
    .flags = CTA_KI_CLUSTER,
    .setup = kc_cluster_order_setup,
    .verify = kc_checksum,
};
CTA_HARNESS(kc_cluster_order_info)
