/* Occupancy calculator tests: block shapes on H100 and B200 whose expected
 * blocks-per-SM are worked out by hand, in the comments, from the rules of
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor (cuda_occupancy.h).
 *
 * Both parts (cc 9.0 and 10.0) have: 2048 threads / 64 warps / 32 blocks
 * per SM; 65536 registers per SM in 4 sub-partitions of 16384, allocated
 * per warp in units of 256, at most 255 per thread and 65536 per block;
 * 233472 B (228 KB) of shared memory per SM, at most 232448 B (227 KB) per
 * block, 1024 B reserved per resident block, allocated in units of 128 B. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "ctasim/device.h"

static const struct cta_device_model *h100(void)
{
	const struct cta_device_model *m = cta_device_find("H100-SXM");

	assert_non_null(m);
	return m;
}

static const struct cta_device_model *b200(void)
{
	const struct cta_device_model *m = cta_device_find("B200");

	assert_non_null(m);
	return m;
}

static unsigned occ(const struct cta_device_model *m, unsigned threads, unsigned regs,
                    size_t smem_static, size_t smem_dynamic, cta_limiter *why)
{
	struct cta_block_resources r = {
	    .threads = threads,
	    .regs_per_thread = regs,
	    .smem_static = smem_static,
	    .smem_dynamic = smem_dynamic,
	};

	return cta_occupancy_max_blocks(m, &r, why);
}

/* 256 threads = 8 warps, 16 regs, no shared memory.
 * threads: 2048 / 256 = 8; warps: 64 / 8 = 8; blocks: 32;
 * registers: 16 * 32 = 512 per warp, 16384 / 512 = 32 warps per
 * sub-partition, 128 per SM, 128 / 8 = 16; smem: (0 + 1024) -> 1024,
 * 233472 / 1024 = 228. Minimum 8, threads and warps tie: threads. */
static void h100_256_threads_is_thread_limited_at_8(void **state)
{
	cta_limiter why;

	(void)state;
	assert_int_equal(occ(h100(), 256, 16, 0, 0, &why), 8);
	assert_int_equal(why, CTA_LIMIT_THREADS);
}

/* 32 threads = 1 warp, 16 regs. threads 64, warps 64, blocks 32,
 * registers 128, smem 228: the 32-block limit binds. */
static void h100_one_warp_blocks_are_block_limited_at_32(void **state)
{
	cta_limiter why;

	(void)state;
	assert_int_equal(occ(h100(), 32, 16, 0, 0, &why), 32);
	assert_int_equal(why, CTA_LIMIT_BLOCKS);
}

/* 256 threads, 64 regs: 64 * 32 = 2048 per warp; 16384 / 2048 = 8 warps
 * per sub-partition, 32 per SM, 32 / 8 = 4 blocks (threads allow 8). */
static void h100_64_registers_limit_256_thread_blocks_to_4(void **state)
{
	cta_limiter why;

	(void)state;
	assert_int_equal(occ(h100(), 256, 64, 0, 0, &why), 4);
	assert_int_equal(why, CTA_LIMIT_REGISTERS);
}

/* Register granularity: 33 regs * 32 = 1056 per warp, rounded up to 1280
 * (5 x 256). 16384 / 1280 = 12 warps per sub-partition, 48 per SM,
 * 48 / 8 = 6 blocks. Without rounding it would be 65536 / (1056 * 8) = 7.
 * 40 regs (exactly 1280 per warp) gives the same 6. */
static void h100_register_allocation_unit_rounds_33_registers_up_to_40(void **state)
{
	cta_limiter why;

	(void)state;
	assert_int_equal(occ(h100(), 256, 33, 0, 0, &why), 6);
	assert_int_equal(why, CTA_LIMIT_REGISTERS);
	assert_int_equal(occ(h100(), 256, 40, 0, 0, &why), 6);
	assert_int_equal(why, CTA_LIMIT_REGISTERS);
}

/* Sub-partitions: 1-warp blocks at 144 regs = 4608 per warp. Per
 * sub-partition 16384 / 4608 = 3 warps, 12 per SM, so 12 blocks, where the
 * whole register file would naively give 65536 / 4608 = 14. */
static void h100_registers_are_counted_per_sub_partition(void **state)
{
	cta_limiter why;

	(void)state;
	assert_int_equal(occ(h100(), 32, 144, 0, 0, &why), 12);
	assert_int_equal(why, CTA_LIMIT_REGISTERS);
}

/* regs_per_thread 0 stands for 32: 1024 threads = 32 warps at 1024 regs
 * per warp -> 64 warps by registers -> 2 blocks; threads 2048 / 1024 = 2
 * too, and threads win the tie. */
static void b200_zero_registers_means_32(void **state)
{
	cta_limiter why;

	(void)state;
	assert_int_equal(occ(b200(), 1024, 0, 0, 0, &why), 2);
	assert_int_equal(why, CTA_LIMIT_THREADS);
	assert_int_equal(occ(b200(), 1024, 33, 0, 0, &why), 1); /* 1280 * 32 = 40960 */
	assert_int_equal(why, CTA_LIMIT_REGISTERS);
}

/* 48-thread blocks take 2 whole warps: warps 64 / 2 = 32, threads
 * 2048 / 48 = 42, blocks 32. Warps and blocks tie at 32: warps. */
static void b200_partial_warp_blocks_are_warp_limited(void **state)
{
	cta_limiter why;

	(void)state;
	assert_int_equal(occ(b200(), 48, 32, 0, 0, &why), 32);
	assert_int_equal(why, CTA_LIMIT_WARPS);
}

/* 96 threads = 3 warps at 168 regs: 5376 per warp (21 x 256);
 * 16384 / 5376 = 3 warps per sub-partition, 12 per SM, 12 / 3 = 4. */
static void b200_168_registers_limit_3_warp_blocks_to_4(void **state)
{
	cta_limiter why;

	(void)state;
	assert_int_equal(occ(b200(), 96, 168, 0, 0, &why), 4);
	assert_int_equal(why, CTA_LIMIT_REGISTERS);
}

/* 100 KB dynamic: 102400 + 1024 = 103424 (a multiple of 128);
 * 233472 / 103424 = 2 blocks. */
static void b200_100k_dynamic_shared_memory_fits_2_blocks(void **state)
{
	cta_limiter why;

	(void)state;
	assert_int_equal(occ(b200(), 256, 32, 0, 102400, &why), 2);
	assert_int_equal(why, CTA_LIMIT_SMEM);
}

/* The per-block reservation: 115712 B per block + 1024 = 116736, and
 * 2 x 116736 = 233472 fits exactly: 2 blocks. 1024 B more per block
 * (116736 + 1024 = 117760, x 2 = 235520 > 233472) fits only 1, though the
 * kernel's own 2 x 116736 would fit without the reservation. */
static void h100_shared_memory_reservation_costs_a_block(void **state)
{
	cta_limiter why;

	(void)state;
	assert_int_equal(occ(h100(), 128, 32, 115712, 0, &why), 2);
	assert_int_equal(why, CTA_LIMIT_SMEM);
	assert_int_equal(occ(h100(), 128, 32, 100000, 16736, &why), 1);
	assert_int_equal(why, CTA_LIMIT_SMEM);
}

/* Shared-memory granularity: 45666 + 1024 = 46690 B, rounded up to 46720
 * (365 x 128). 5 x 46690 = 233450 would fit, 5 x 46720 = 233600 does not:
 * 4 blocks. */
static void h100_shared_memory_allocation_unit_rounds_up(void **state)
{
	cta_limiter why;

	(void)state;
	assert_int_equal(occ(h100(), 128, 32, 0, 45666, &why), 4);
	assert_int_equal(why, CTA_LIMIT_SMEM);
	/* 44544 + 1024 = 45568 = 356 x 128; 233472 / 45568 = 5. */
	assert_int_equal(occ(h100(), 128, 32, 0, 44544, &why), 5);
	assert_int_equal(why, CTA_LIMIT_SMEM);
}

/* 227 KB is the largest block: 232448 + 1024 = 233472 = smem_per_sm, one
 * block. One byte more exceeds max_smem_per_block: cannot launch. */
static void h100_largest_shared_memory_block_fits_once(void **state)
{
	cta_limiter why;

	(void)state;
	assert_int_equal(occ(h100(), 128, 32, 1024, 232448 - 1024, &why), 1);
	assert_int_equal(why, CTA_LIMIT_SMEM);
	assert_int_equal(occ(h100(), 128, 32, 1024, 232448 - 1023, &why), 0);
	assert_int_equal(why, CTA_LIMIT_SMEM);
}

static void too_many_threads_per_block_cannot_fit(void **state)
{
	cta_limiter why = CTA_LIMIT_NONE;

	(void)state;
	assert_int_equal(occ(h100(), 1025, 32, 0, 0, &why), 0);
	assert_int_equal(why, CTA_LIMIT_THREADS);
	assert_int_equal(occ(b200(), 0, 32, 0, 0, &why), 0);
	assert_int_equal(why, CTA_LIMIT_THREADS);
}

static void too_many_registers_per_thread_cannot_fit(void **state)
{
	cta_limiter why = CTA_LIMIT_NONE;

	(void)state;
	assert_int_equal(occ(b200(), 32, 256, 0, 0, &why), 0);
	assert_int_equal(why, CTA_LIMIT_REGISTERS);
	/* 255 is allowed: 8160 -> 8192 per warp, 2 warps per sub-partition. */
	assert_int_equal(occ(b200(), 32, 255, 0, 0, &why), 8);
	assert_int_equal(why, CTA_LIMIT_REGISTERS);
}

/* 1024 threads at 72 regs: 2304 per warp x 32 warps = 73728 > 65536.
 * 288 threads (9 warps) at 200 regs: 6400 x 9 = 57600 fits the block
 * limit, but the hardware check rounds the warps up to 12 (a multiple of
 * the 4 sub-partitions): 6400 x 12 = 76800 > 65536. */
static void too_many_registers_per_block_cannot_fit(void **state)
{
	cta_limiter why = CTA_LIMIT_NONE;

	(void)state;
	assert_int_equal(occ(h100(), 1024, 72, 0, 0, &why), 0);
	assert_int_equal(why, CTA_LIMIT_REGISTERS);
	assert_int_equal(occ(h100(), 288, 200, 0, 0, &why), 0);
	assert_int_equal(why, CTA_LIMIT_REGISTERS);
	/* 1024 threads at 64 regs is exactly 65536: one block. */
	assert_int_equal(occ(h100(), 1024, 64, 0, 0, &why), 1);
}

static void too_much_shared_memory_per_block_cannot_fit(void **state)
{
	cta_limiter why = CTA_LIMIT_NONE;

	(void)state;
	assert_int_equal(occ(b200(), 64, 32, 200000, 40000, &why), 0);
	assert_int_equal(why, CTA_LIMIT_SMEM);
}

/* A100 (cc 8.0): 164 KB per SM, 163 KB per block. 80 KB dynamic:
 * 81920 + 1024 = 82944; 167936 / 82944 = 2. */
static void a100_has_smaller_shared_memory(void **state)
{
	const struct cta_device_model *m = cta_device_find("A100");
	cta_limiter why;

	(void)state;
	assert_non_null(m);
	assert_int_equal(occ(m, 256, 32, 0, 81920, &why), 2);
	assert_int_equal(why, CTA_LIMIT_SMEM);
	assert_int_equal(occ(m, 256, 32, 0, 163 * 1024 + 1, &why), 0);
	assert_int_equal(why, CTA_LIMIT_SMEM);
}

/* A model with fewer thread slots than warp slots (as cc 8.6 parts have
 * 1536 threads) reports threads when they bind alone. */
static void thread_slots_can_bind_before_warp_slots(void **state)
{
	struct cta_device_model m = *h100();
	cta_limiter why;

	(void)state;
	m.max_threads_per_sm = 1500;
	/* threads 1500 / 500 = 3; warps 64 / 16 = 4. */
	assert_int_equal(occ(&m, 500, 16, 0, 0, &why), 3);
	assert_int_equal(why, CTA_LIMIT_THREADS);
}

/* Rows recorded from cudaOccMaxActiveBlocksPerMultiprocessor (the CUDA
 * toolkit's cuda_occupancy.h) with the device properties of an H100 80GB
 * HBM3, as compute capability 9.0 and 10.0, with the kernel opted in to the
 * full 227 KB of dynamic shared memory: every 251st of a 10710-shape sweep
 * (threads x registers x dynamic shared memory), all of which ctasim
 * matched. Columns: cc major, threads, registers, dynamic smem, blocks. */
static const struct {
	unsigned cc, threads, regs;
	size_t smem;
	unsigned blocks;
} cuda_occupancy_rows[] = {
    {9, 1, 16, 0, 32},         {9, 1, 255, 116736, 1},   {9, 32, 255, 49152, 4},
    {9, 33, 255, 4096, 4},     {9, 48, 232, 232449, 0},  {9, 64, 232, 115712, 2},
    {9, 96, 232, 44544, 2},    {9, 100, 232, 100, 2},    {9, 128, 200, 232448, 1},
    {9, 160, 200, 100000, 1},  {9, 192, 200, 45666, 1},  {9, 256, 200, 1, 1},
    {9, 288, 168, 150000, 1},  {9, 320, 168, 65536, 1},  {9, 384, 168, 12288, 1},
    {9, 416, 168, 0, 0},       {9, 500, 144, 116736, 0}, {9, 512, 144, 49152, 0},
    {9, 640, 144, 4096, 0},    {9, 768, 128, 232449, 0}, {9, 992, 128, 115712, 0},
    {9, 1024, 128, 44544, 0},  {10, 1, 128, 100, 16},    {10, 32, 96, 232448, 1},
    {10, 33, 96, 100000, 2},   {10, 48, 96, 45666, 4},   {10, 64, 96, 1, 10},
    {10, 96, 80, 150000, 1},   {10, 100, 80, 65536, 3},  {10, 128, 80, 12288, 6},
    {10, 160, 80, 0, 4},       {10, 192, 72, 116736, 1}, {10, 256, 72, 49152, 3},
    {10, 288, 72, 4096, 3},    {10, 320, 64, 232449, 0}, {10, 384, 64, 115712, 2},
    {10, 416, 64, 44544, 2},   {10, 500, 64, 100, 2},    {10, 512, 56, 232448, 1},
    {10, 640, 56, 100000, 1},  {10, 768, 56, 45666, 1},  {10, 992, 56, 1, 1},
    {10, 1024, 48, 150000, 1},
};

static void matches_cuda_occupancy_header_on_recorded_shapes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cuda_occupancy_rows) / sizeof(cuda_occupancy_rows[0]); i++) {
		const struct cta_device_model *m = cuda_occupancy_rows[i].cc == 9 ? h100() : b200();
		unsigned got = occ(m, cuda_occupancy_rows[i].threads, cuda_occupancy_rows[i].regs,
		                   0, cuda_occupancy_rows[i].smem, NULL);

		if (got != cuda_occupancy_rows[i].blocks)
			fail_msg("cc %u, %u threads, %u regs, %zu B: got %u, CUDA says %u",
			         cuda_occupancy_rows[i].cc, cuda_occupancy_rows[i].threads,
			         cuda_occupancy_rows[i].regs, cuda_occupancy_rows[i].smem, got,
			         cuda_occupancy_rows[i].blocks);
	}
}

static void null_limiter_is_accepted(void **state)
{
	(void)state;
	assert_int_equal(occ(h100(), 256, 16, 0, 0, NULL), 8);
}

static void limiter_names_are_readable(void **state)
{
	(void)state;
	assert_string_equal(cta_limiter_name(CTA_LIMIT_THREADS), "threads");
	assert_string_equal(cta_limiter_name(CTA_LIMIT_WARPS), "warps");
	assert_string_equal(cta_limiter_name(CTA_LIMIT_BLOCKS), "blocks");
	assert_string_equal(cta_limiter_name(CTA_LIMIT_REGISTERS), "registers");
	assert_string_equal(cta_limiter_name(CTA_LIMIT_SMEM), "shared memory");
	assert_string_equal(cta_limiter_name(CTA_LIMIT_NONE), "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(h100_256_threads_is_thread_limited_at_8),
	    cmocka_unit_test(h100_one_warp_blocks_are_block_limited_at_32),
	    cmocka_unit_test(h100_64_registers_limit_256_thread_blocks_to_4),
	    cmocka_unit_test(h100_register_allocation_unit_rounds_33_registers_up_to_40),
	    cmocka_unit_test(h100_registers_are_counted_per_sub_partition),
	    cmocka_unit_test(b200_zero_registers_means_32),
	    cmocka_unit_test(b200_partial_warp_blocks_are_warp_limited),
	    cmocka_unit_test(b200_168_registers_limit_3_warp_blocks_to_4),
	    cmocka_unit_test(b200_100k_dynamic_shared_memory_fits_2_blocks),
	    cmocka_unit_test(h100_shared_memory_reservation_costs_a_block),
	    cmocka_unit_test(h100_shared_memory_allocation_unit_rounds_up),
	    cmocka_unit_test(h100_largest_shared_memory_block_fits_once),
	    cmocka_unit_test(too_many_threads_per_block_cannot_fit),
	    cmocka_unit_test(too_many_registers_per_thread_cannot_fit),
	    cmocka_unit_test(too_many_registers_per_block_cannot_fit),
	    cmocka_unit_test(too_much_shared_memory_per_block_cannot_fit),
	    cmocka_unit_test(a100_has_smaller_shared_memory),
	    cmocka_unit_test(thread_slots_can_bind_before_warp_slots),
	    cmocka_unit_test(matches_cuda_occupancy_header_on_recorded_shapes),
	    cmocka_unit_test(null_limiter_is_accepted),
	    cmocka_unit_test(limiter_names_are_readable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
