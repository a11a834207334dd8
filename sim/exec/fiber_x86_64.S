/* Fiber context switch for x86-64 System V: saves only what a callee must
 * preserve (rbx, rbp, r12-r15, rsp, MXCSR and the x87 control word), since
 * the caller of cta__fiber_swap already treats everything else as clobbered. */

	.text

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
	pushq	$0			/* MXCSR at 0, x87 CW at 4, zero pad */
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
	movq	%rsp, %rcx
	movq	%rsp, (%rdi)
	movq	%rsi, %rsp
	/* Loading the control words costs more than the rest of the switch
	 * (fldcw is microcoded), and fibers almost never differ in them. Each
	 * compare reads exactly what one store wrote, so that the loads are
	 * forwarded from the store buffer without a stall. */
	movl	(%rsp), %eax
	cmpl	(%rcx), %eax
	jne	2f
	movzwl	4(%rsp), %eax
	cmpw	4(%rcx), %ax
	jne	2f
1:	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
2:	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	jmp	1b
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
