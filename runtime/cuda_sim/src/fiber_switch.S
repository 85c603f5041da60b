// bertc_sim_fiber_switch(void **save, void *resume) for x86-64 System V: the callee-saved
// registers go on the current stack, the stack pointer into *save; then the other fiber's
// registers come off its stack and `ret` continues it. A new fiber's stack is laid out by
// FiberStack::prepare so that `ret` lands in bertc_sim_fiber_start with r12 = argument and
// r13 = entry.
#if defined(__x86_64__)
    .text
    .globl bertc_sim_fiber_switch
    .type bertc_sim_fiber_switch, @function
bertc_sim_fiber_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size bertc_sim_fiber_switch, .-bertc_sim_fiber_switch

    .globl bertc_sim_fiber_start
    .type bertc_sim_fiber_start, @function
bertc_sim_fiber_start:
    movq %r12, %rdi
    callq *%r13
    ud2
    .size bertc_sim_fiber_start, .-bertc_sim_fiber_start

    .section .note.GNU-stack,"",@progbits
#else
#error "the simulated CUDA device's fibers are written for x86-64"
#endif
