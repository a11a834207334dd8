/* Fiber context switch for x86-64 System V: saves only the registers a
 * callee must preserve (rbx, rbp, r12-r15, rsp), since the caller of
 * cta__fiber_swap already treats everything else as clobbered.
 *
 * The floating-point control state (MXCSR, the x87 control word) is the
 * host thread's, shared by its fibers as by the functions it calls: a
 * kernel body is a function of the simulated thread, and CUDA code has no
 * rounding or exception modes to change (each device instruction names its
 * rounding). Saving it cost more than the rest of the switch: fnstcw alone
 * took 4% of a cancel-heavy run's time. */

/* void cta__fiber_swap(void **save_sp, void *new_sp) */
	.globl	cta__fiber_swap
	.hidden	cta__fiber_swap
	.type	cta__fiber_swap, @function
	.p2align 4
cta__fiber_swap:
	.cfi_startproc
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	pushq	$0			/* padding: keeps the frame of the layout prepare() makes */
	movq	%rsp, (%rdi)
	movq	%rsi, %rsp
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
	.cfi_endproc
	.size	cta__fiber_swap, .-cta__fiber_swap

/* First code of a new fiber, reached by the ret above: r12 holds the
 * argument and r13 the function (see prepare() in fiber.c). The function
 * never returns; rbp = 0 and an undefined return address end backtraces. */
	.globl	cta__fiber_entry
	.hidden	cta__fiber_entry
	.type	cta__fiber_entry, @function
	.p2align 4
cta__fiber_entry:
	.cfi_startproc
	.cfi_undefined rip
	xorl	%ebp, %ebp
	movq	%r12, %rdi
	call	*%r13
	ud2
	.cfi_endproc
	.size	cta__fiber_entry, .-cta__fiber_entry

	.section .note.GNU-stack,"",@progbits
