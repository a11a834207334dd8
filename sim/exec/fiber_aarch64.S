/* Fiber context switch for AArch64 (AAPCS64): saves only what a callee must
 * preserve (x19-x30, sp and the low halves of v8-v15), since the caller of
 * cta__fiber_swap already treats everything else as clobbered. */

	.text

/* void cta__fiber_swap(void **save_sp, void *new_sp)
 * Frame from sp: x19..x28, x29, x30, d8..d15 (160 bytes). */
	.globl	cta__fiber_swap
	.hidden	cta__fiber_swap
	.type	cta__fiber_swap, %function
	.p2align 4
cta__fiber_swap:
	.cfi_startproc
	hint	#34			/* bti c */
	sub	sp, sp, #160
	stp	x19, x20, [sp, #0]
	stp	x21, x22, [sp, #16]
	stp	x23, x24, [sp, #32]
	stp	x25, x26, [sp, #48]
	stp	x27, x28, [sp, #64]
	stp	x29, x30, [sp, #80]
	stp	d8, d9, [sp, #96]
	stp	d10, d11, [sp, #112]
	stp	d12, d13, [sp, #128]
	stp	d14, d15, [sp, #144]
	mov	x2, sp
	str	x2, [x0]
	mov	sp, x1
	ldp	x19, x20, [sp, #0]
	ldp	x21, x22, [sp, #16]
	ldp	x23, x24, [sp, #32]
	ldp	x25, x26, [sp, #48]
	ldp	x27, x28, [sp, #64]
	ldp	x29, x30, [sp, #80]
	ldp	d8, d9, [sp, #96]
	ldp	d10, d11, [sp, #112]
	ldp	d12, d13, [sp, #128]
	ldp	d14, d15, [sp, #144]
	add	sp, sp, #160
	ret
	.cfi_endproc
	.size	cta__fiber_swap, .-cta__fiber_swap

/* First code of a new fiber, reached by the ret above: x19 holds the
 * argument and x20 the function (see prepare() in fiber.c). The function
 * never returns; x29 = x30 = 0 end backtraces. */
	.globl	cta__fiber_entry
	.hidden	cta__fiber_entry
	.type	cta__fiber_entry, %function
	.p2align 4
cta__fiber_entry:
	.cfi_startproc
	.cfi_undefined x30
	mov	x29, #0
	mov	x30, #0
	mov	x0, x19
	blr	x20
	brk	#0x3e8
	.cfi_endproc
	.size	cta__fiber_entry, .-cta__fiber_entry

	.section .note.GNU-stack,"",%progbits
