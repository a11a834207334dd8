// The kernel compiler: an LLVM 16 pass plugin that turns a kernel body with
// __syncthreads into a resumable function whose regions between barriers run
// one after another, its values live across a barrier kept in a small frame
// per thread (C++ only because LLVM's pass API is C++; see compiler/README.md).
//
// Input: functions named NAME__kc_body, which compiler/kc_kernel.h makes of
// each CTA_KERNEL of a kernels/*_body.h, and the descriptor NAME__kc beside
// them. Each barrier call becomes a call to cta__kc_arrive (the engine's
// barrier bookkeeping, which does not block) followed by a suspension point;
// LLVM's coroutine passes (CoroSplit, later in the same pipeline) then build
// the frame and the resume function. The engine (sim/exec/regions.c) runs a
// block's threads as loops of resumptions, one frame each. A body the pass
// cannot transform keeps running on fibers; the descriptor's `why` says why,
// and the build prints it when CTA_KC_VERBOSE is set in the environment.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/CFG.h"
#include "llvm/Analysis/InstructionSimplify.h"
#include "llvm/Analysis/Loads.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/PostDominators.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Scalar/Reassociate.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/CodeExtractor.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/LoopPeel.h"
#include "llvm/Transforms/Utils/LoopSimplify.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

using namespace llvm;

namespace
{

const char *const kBarrier = "cta__syncthreads";
// A cluster barrier (cta_cluster_sync): the loop form splits the body there
// as at a __syncthreads; the engine runs a cluster's CTAs as rounds on one
// lane (sim/exec/regions.c, run_cluster), a body with one only where its
// other waits are mbarrier waits (Fission::prepare).
const char *const kCluster = "cta__cluster_sync";
const char *const kSuffix = "__kc_body";

// Calls that wait for, or depend on, other threads in ways the region form
// does not model (the engine's lanes do): the body stays on fibers.
bool isWaitingCall(StringRef n)
{
	return n == "cta__syncthreads_rule" || n == "cta__grid_sync";
}

// An mbarrier wait: the loop form ends a thread's region there when the
// thread would block (the engine then parks the block, sim/exec/regions.c),
// and lets it go on inline when the phase already completed.
const char *const kWait = "cta__mbarrier_try_wait_parity";

// The work-stealing loops (cta_for_each_canceled_block, cta_try_cancel_blocks):
// the loop form runs them for the whole block at once, the block waiting for
// each request as a whole (cta__clc_ws_run in sim/clc/clc.c).
bool isWorkSteal(StringRef n)
{
	return n == "cta__for_each_canceled_block" || n == "cta__try_cancel_blocks";
}

// The body a work-stealing call runs for each block, or null.
Function *workStealFn(const CallBase *CB)
{
	bool te = CB->getCalledFunction()->getName() == "cta__try_cancel_blocks";
	return dyn_cast<Function>(CB->getArgOperand(te ? 2 : 1)->stripPointerCasts());
}

// Whether F is, or calls (transitively), cta__spin_poll: kernel.h's yield
// points (atomics, fences, volatile loads) are inline helpers that call it.
bool reachesPoll(const Function &F, std::set<const Function *> &stack)
{
	if (F.getName() == "cta__spin_poll")
		return true;
	if (!stack.insert(&F).second)
		return false;
	for (const Instruction &I : instructions(F))
		if (const auto *CB = dyn_cast<CallBase>(&I))
			if (const Function *c = CB->getCalledFunction())
				if (c->getName() == "cta__spin_poll" ||
				    (!c->isDeclaration() && reachesPoll(*c, stack)))
					return true;
	return false;
}

std::string where(const Instruction &I)
{
	if (const DebugLoc &d = I.getDebugLoc())
		return " at line " + std::to_string(d.getLine());
	return "";
}

struct Checker {
	std::set<const Function *> seen;
	// A loop of the body or its helpers polls (a yield point in a loop):
	// the loop form then ends a thread's region at each yield point where
	// it spins (Fission's spin mode, CTA__KC_SPIN).
	bool spins = false;
	// Why F (a helper the body calls, or the body) cannot run as regions;
	// empty when it can. Barriers are allowed in the body (inBody) only.
	std::string check(const Function &F, bool inBody, FunctionAnalysisManager &FAM)
	{
		if (!seen.insert(&F).second)
			return "";
		for (const Instruction &I : instructions(F)) {
			const auto *CB = dyn_cast<CallBase>(&I);
			if (!CB)
				continue;
			if (CB->isInlineAsm())
				continue;
			const Function *callee = CB->getCalledFunction();
			if (!callee)
				return "an indirect call" + where(I) +
				       " (it might wait at a barrier)";
			StringRef n = callee->getName();
			if (n == kBarrier) {
				if (!inBody)
					return "__syncthreads in the helper " + F.getName().str() +
					       " (not inlined into the body)";
				continue;
			}
			if (isWorkSteal(n)) {
				if (!inBody)
					return n.str() + " in the helper " + F.getName().str() +
					       " (not inlined into the body)";
				Function *fn = workStealFn(CB);
				if (!fn || fn->isDeclaration())
					return "a work-stealing loop" + where(I) +
					       " whose body is not a function of this file";
				// The block runs fn thread after thread: it may not wait.
				std::string why = check(*fn, false, FAM);
				if (!why.empty())
					return why;
				continue;
			}
			if (n == kWait || n == kCluster) {
				if (!inBody)
					return n.str() + " in the helper " + F.getName().str() +
					       " (not inlined into the body)";
				continue;
			}
			if (isWaitingCall(n))
				return "it calls " + n.str() + where(I) +
				       " (grid waits run on fibers)";
			if (!callee->isDeclaration()) {
				std::string why = check(*callee, false, FAM);
				if (!why.empty())
					return why;
			}
		}
		// A loop that reads memory another thread writes (an atomic or
		// volatile load) may spin until a thread after it in the region
		// writes: only a lane of its own lets that thread run, unless the
		// loop also has a yield point (atomics, fences, volatile loads,
		// kernel.h's cta__poll), where a spinning thread is suspended
		// (docs/FORWARD_PROGRESS.md): on its fiber, or in the loop form at
		// the end of its region there (spins).
		auto &LI = FAM.getResult<LoopAnalysis>(const_cast<Function &>(F));
		std::set<const Loop *> polling;
		for (const Instruction &I : instructions(F))
			if (const auto *CB = dyn_cast<CallBase>(&I)) {
				std::set<const Function *> st;
				if (CB->getCalledFunction() &&
				    reachesPoll(*CB->getCalledFunction(), st))
					for (const Loop *L = LI.getLoopFor(I.getParent()); L;
					     L = L->getParentLoop())
						polling.insert(L);
			}
		for (const Instruction &I : instructions(F)) {
			const auto *L = dyn_cast<LoadInst>(&I);
			if (!L || !(L->isVolatile() || L->isAtomic()))
				continue;
			const Loop *lp = LI.getLoopFor(I.getParent());
			if (lp && !polling.count(lp))
				return "it spins on memory" + where(I) + " in " +
				       F.getName().str() + " with no yield point in the loop";
		}
		spins = spins || !polling.empty();
		return "";
	}
};

// Inlines into F every call to a defined function that reaches a barrier,
// so that the barrier becomes the body's own.
bool reachesBarrier(const Function &F, std::set<const Function *> &stack)
{
	if (!stack.insert(&F).second)
		return false;
	for (const Instruction &I : instructions(F))
		if (const auto *CB = dyn_cast<CallBase>(&I))
			if (const Function *c = CB->getCalledFunction()) {
				if (c->getName() == kBarrier || isWorkSteal(c->getName()) ||
				    c->getName() == kWait || c->getName() == kCluster)
					return true;
				if (!c->isDeclaration() && reachesBarrier(*c, stack))
					return true;
			}
	return false;
}

// Folds what the inlined helpers' constant arguments decide (ck_body.h's
// ck_graph_app(p, 0) never reaches its grid_sync branch), so that the
// checks see only the code the body can run.
void foldConstants(Function &F)
{
	const DataLayout &DL = F.getParent()->getDataLayout();
	// (The arguments still pass through allocas this early.)
	SmallVector<AllocaInst *, 16> promote;
	for (Instruction &I : F.getEntryBlock())
		if (auto *A = dyn_cast<AllocaInst>(&I))
			if (isAllocaPromotable(A))
				promote.push_back(A);
	if (!promote.empty()) {
		DominatorTree DT(F);
		PromoteMemToReg(promote, DT);
	}
	for (int round = 0; round < 4; round++) {
		bool changed = false;
		for (BasicBlock &bb : F)
			for (Instruction &I : make_early_inc_range(bb))
				if (Value *v = simplifyInstruction(&I, SimplifyQuery(DL))) {
					if (v != &I && !I.getType()->isVoidTy()) {
						I.replaceAllUsesWith(v);
						changed = true;
					}
					if (isInstructionTriviallyDead(&I)) {
						I.eraseFromParent();
						changed = true;
					}
				}
		for (BasicBlock &bb : F)
			changed |= ConstantFoldTerminator(&bb, true);
		changed |= removeUnreachableBlocks(F);
		if (!changed)
			return;
	}
}

void inlineBarrierHelpers(Function &F)
{
	for (int round = 0; round < 16; round++) {
		SmallVector<CallBase *, 8> pending;
		for (Instruction &I : instructions(F))
			if (auto *CB = dyn_cast<CallBase>(&I))
				if (Function *c = CB->getCalledFunction())
					if (!c->isDeclaration() && c != &F) {
						std::set<const Function *> st;
						if (reachesBarrier(*c, st))
							pending.push_back(CB);
					}
		if (pending.empty())
			return;
		for (CallBase *CB : pending) {
			InlineFunctionInfo IFI;
			InlineFunction(*CB, IFI);
		}
	}
}

// Rewrites F into a switch-resumed coroutine Ramp(args, lane, ix) -> frame.
Function *toRegions(Function &F, SmallVectorImpl<CallInst *> &bars)
{
	Module &M = *F.getParent();
	LLVMContext &C = M.getContext();
	Type *ptrT = PointerType::getUnqual(C);
	Type *i64 = Type::getInt64Ty(C), *i32 = Type::getInt32Ty(C), *i8 = Type::getInt8Ty(C),
	     *i1 = Type::getInt1Ty(C);
	SmallVector<Type *, 4> params;
	for (const Argument &a : F.args())
		params.push_back(a.getType());
	FunctionType *FT = FunctionType::get(ptrT, params, false);
	std::string base = F.getName().str();
	base.resize(base.size() - std::string(kSuffix).size());
	Function *R = Function::Create(FT, GlobalValue::InternalLinkage, base + "__kc_ramp", M);
	R->copyAttributesFrom(&F);
	R->removeFnAttr(Attribute::AlwaysInline);
	R->addFnAttr(Attribute::NoInline);
	R->removeFnAttr(Attribute::OptimizeNone);
	R->setPresplitCoroutine();
	R->setSubprogram(F.getSubprogram());
	F.setSubprogram(nullptr);
	for (unsigned i = 0; i < F.arg_size(); i++) {
		R->getArg(i)->setName(F.getArg(i)->getName());
		F.getArg(i)->replaceAllUsesWith(R->getArg(i));
	}
	BasicBlock *oldEntry = &F.getEntryBlock();
	R->splice(R->end(), &F);

	auto decl = [&](Intrinsic::ID id, ArrayRef<Type *> tys = {}) {
		return Intrinsic::getDeclaration(&M, id, tys);
	};
	FunctionCallee frameFn = M.getOrInsertFunction("cta__kc_frame", ptrT, i64);
	FunctionCallee arriveFn =
	    M.getOrInsertFunction("cta__kc_arrive", Type::getVoidTy(C), ptrT, i32);

	// Entry: the allocas (SROA only looks at the entry block), then the
	// coroutine's identity and its frame, from the engine's per-block slots.
	BasicBlock *entry = BasicBlock::Create(C, "kc.entry", R, oldEntry);
	IRBuilder<> B(entry);
	SmallVector<AllocaInst *, 16> allocas;
	for (Instruction &I : *oldEntry)
		if (auto *A = dyn_cast<AllocaInst>(&I))
			allocas.push_back(A);
	for (AllocaInst *A : allocas)
		A->moveBefore(*entry, entry->end());
	Value *nullp = ConstantPointerNull::get(cast<PointerType>(ptrT));
	Value *id =
	    B.CreateCall(decl(Intrinsic::coro_id), {B.getInt32(16), nullp, nullp, nullp}, "kc.id");
	Value *size = B.CreateCall(decl(Intrinsic::coro_size, {i64}), {}, "kc.size");
	Value *mem = B.CreateCall(frameFn, {size}, "kc.mem");
	Value *hdl = B.CreateCall(decl(Intrinsic::coro_begin), {id, mem}, "kc.hdl");
	B.CreateBr(oldEntry);

	// The shared exits: suspended (return the frame), and destroyed (the
	// engine frees frames with their block: nothing to free here).
	BasicBlock *suspend = BasicBlock::Create(C, "kc.suspend", R);
	B.SetInsertPoint(suspend);
	B.CreateCall(decl(Intrinsic::coro_end), {hdl, B.getFalse()});
	B.CreateRet(hdl);
	BasicBlock *cleanup = BasicBlock::Create(C, "kc.cleanup", R);
	B.SetInsertPoint(cleanup);
	B.CreateCall(decl(Intrinsic::coro_free), {id, hdl});
	B.CreateBr(suspend);
	BasicBlock *trap = BasicBlock::Create(C, "kc.trap", R);
	B.SetInsertPoint(trap);
	B.CreateCall(decl(Intrinsic::trap));
	B.CreateUnreachable();
	(void)i1;

	Value *noneTok = ConstantTokenNone::get(C);
	// Barriers: arrive (bookkeeping, never blocks), then suspend; the
	// engine resumes the thread once the barrier completed.
	for (CallInst *CI : bars) {
		IRBuilder<> b(CI);
		CallInst *arr =
		    b.CreateCall(arriveFn, {CI->getArgOperand(0), CI->getArgOperand(1)});
		arr->setDebugLoc(CI->getDebugLoc());
		CallInst *s = b.CreateCall(decl(Intrinsic::coro_suspend), {noneTok, b.getFalse()});
		BasicBlock *bb = CI->getParent();
		BasicBlock *cont = SplitBlock(bb, CI->getNextNode(), (DominatorTree *)nullptr);
		bb->getTerminator()->eraseFromParent();
		IRBuilder<> t(bb);
		SwitchInst *sw = t.CreateSwitch(s, suspend, 2);
		sw->addCase(t.getInt8(0), cont);
		sw->addCase(t.getInt8(1), cleanup);
		CI->eraseFromParent();
	}
	// Returns: the final suspension (the engine reads a null resume
	// pointer as "this thread exited").
	SmallVector<ReturnInst *, 4> rets;
	for (BasicBlock &bb : *R)
		if (auto *RI = dyn_cast<ReturnInst>(bb.getTerminator()))
			if (&bb != suspend)
				rets.push_back(RI);
	for (ReturnInst *RI : rets) {
		IRBuilder<> b(RI);
		CallInst *s = b.CreateCall(decl(Intrinsic::coro_suspend), {noneTok, b.getTrue()});
		SwitchInst *sw = b.CreateSwitch(s, suspend, 2);
		sw->addCase(b.getInt8(0), trap);
		sw->addCase(b.getInt8(1), cleanup);
		RI->eraseFromParent();
	}
	(void)i8;
	return R;
}

// What a walk of a body's call graph does with one direct callee that is
// not an intrinsic: pass it by, follow it into its own calls, or stop there.
enum class Callee { Pass, Follow, Stop };

// Walks the calls F can make, following the callees `judge` says to; false
// at the first callee it stops at, or at an indirect call or inline
// assembly, with *what naming that call.
template <typename Judge> bool walkCalls(Function &F, std::string &what, Judge judge)
{
	SmallVector<Function *, 16> worklist{&F};
	SmallPtrSet<Function *, 16> seen{&F};
	while (!worklist.empty()) {
		Function *G = worklist.pop_back_val();
		for (Instruction &I : instructions(*G)) {
			auto *CB = dyn_cast<CallBase>(&I);
			if (!CB)
				continue;
			Function *c = CB->getCalledFunction();
			if (c && c->isIntrinsic())
				continue;
			if (!c || CB->isInlineAsm()) {
				what = "an indirect call or inline assembly";
				return false;
			}
			switch (judge(*c)) {
			case Callee::Pass:
				break;
			case Callee::Stop:
				what = c->getName().str();
				return false;
			case Callee::Follow:
				if (seen.insert(c).second)
					worklist.push_back(c);
				break;
			}
		}
	}
	return true;
}

// CTA__KC_NO_WAIT (sim/exec/regions.h): whether no call the body can make
// reaches anything but shared memory and __syncthreads: no spin or poll, no
// CLC call, no grid, cluster or mbarrier wait. The body's own functions are
// followed; any other external, indirect or inline-asm call may wait. Sets
// *what to the first such callee. With `polls`, yield points
// (cta__spin_poll, cta__poll_thread: atomics, volatile accesses) are let through too
// (CTA__KC_POLLS_ONLY).
bool neverWaits(Function &F, std::string &what, bool polls = false)
{
	return walkCalls(F, what, [polls](Function &c) {
		StringRef n = c.getName();
		if (n == "cta__shared" || n == "cta__shared_dynamic" || n == kBarrier ||
		    (polls && (n == "cta__spin_poll" || n == "cta__poll_thread")))
			return Callee::Pass;
		return c.isDeclaration() ? Callee::Stop : Callee::Follow;
	});
}

// CTA__KC_NO_SHARED (sim/exec/regions.h): whether the body can never reach
// the block's shared memory. A body has an address in it only from
// cta__shared or cta__shared_dynamic (CTA_SHARED*), which it must not call,
// directly or through its own functions; any other callee must be the
// library's (cta_*: no other of its functions hands out such an address)
// or an intrinsic, and no call is indirect or inline assembly. Sets *what
// to the first call that stops it.
bool neverShared(Function &F, std::string &what)
{
	return walkCalls(F, what, [](Function &c) {
		StringRef n = c.getName();
		if (n == "cta__shared" || n == "cta__shared_dynamic")
			return Callee::Stop;
		if (!c.isDeclaration())
			return Callee::Follow;
		return n.startswith("cta_") ? Callee::Pass : Callee::Stop;
	});
}

// Sets field `idx` of the descriptor's initializer.
void setDescField(GlobalVariable *D, unsigned idx, Constant *v)
{
	auto *init = cast<ConstantStruct>(D->getInitializer());
	SmallVector<Constant *, 8> ops;
	for (unsigned i = 0; i < init->getNumOperands(); i++)
		ops.push_back(init->getOperand(i));
	ops[idx] = v;
	D->setInitializer(ConstantStruct::get(init->getType(), ops));
}

// ---------------------------------------------------------------------------
// Loop fission (continuation-based synchronisation): the body becomes one
// block-level function NAME__kc_fis(args, lane, ix, run) that runs one
// region (the body's start, or the code after barrier i) as a loop over the
// threads run->lo .. run->hi-1, each thread to its next barrier or its end.
// Each exit records the barrier reached in run->cont[t]; the engine
// (sim/exec/regions.c) does the barrier's bookkeeping once per block and
// calls the function again for the next region. A variable live across a
// barrier lives
//  - nowhere, when it is a pure function of the thread's and block's
//    indices and the arguments (rematerialised at each thread's start),
//  - once per block, when every thread stores the same value to it under
//    block-uniform control (read from run->uin at each thread's start,
//    written to run->uout + barrier * uni_bytes at the function's end),
//  - else in a per-thread slot (struct of arrays in run->slots).
// Everything else is a local of the loop, which SROA makes a register.

// struct cta__kc_run (sim/exec/regions.h): every field 8 bytes.
enum RunField {
	RF_SLOTS = 0,
	RF_UIN,
	RF_UOUT,
	RF_CONT,
	RF_T,
	RF_BARMAX,
	RF_ENDMAX,
	RF_N,
	RF_LO,
	RF_HI,
	RF_REGION,
	RF_ARRIVED,
	RF_EXITED,
	RF_WANT,
	RF_FIRSTVT,
	RF_LASTVT,
	RF_LO2,
	RF_HI2,
	RF_COUNT
};
// struct cta__idx: tid at 0 (12 bytes), 56 bytes in all; struct cta__lane:
// tid at 0, vtime at 64 (checked by _Static_assert in regions.c).
const unsigned kIdxSize = 56, kLaneVtime = 64;
const unsigned kMaxBarriers = 250;

// A thread loop of the loop form carries this property in its llvm.loop
// metadata (which the loop passes keep on the loop and its copies), so that
// OutlinePass can find it after them.
const char *const kThreadLoop = "ctasim.thread";
void markThreadLoop(Instruction *latchBr)
{
	LLVMContext &C = latchBr->getContext();
	MDNode *prop = MDNode::get(C, {MDString::get(C, kThreadLoop)});
	MDNode *id = MDNode::getDistinct(C, {nullptr, prop});
	id->replaceOperandWith(0, id);
	latchBr->setMetadata(LLVMContext::MD_loop, id);
}

struct Fission {
	Function &F;
	Module &M;
	LLVMContext &C;
	const DataLayout &DL;
	Argument *argA, *laneA, *ixA;
	SmallVector<CallInst *, 8> bars;
	SmallVector<int, 8>
	    barKind; // 0 __syncthreads, 1 a work-stealing loop, 2 a wait, 3 a cluster barrier
	SmallVector<CallInst *, 2> wsEnter;               // each loop's cta__kc_ws_enter call
	SmallVector<CallInst *, 2> waitAt;                // each wait's cta__kc_wait_blocks call
	SmallVector<BasicBlock *, 8> barBB;               // the block holding barrier i
	SmallVector<BasicBlock *, 8> entryOf;             // region r's first block
	SmallVector<std::vector<BasicBlock *>, 8> blocks; // region r's blocks
	SmallVector<AllocaInst *, 32> allocas;
	std::map<AllocaInst *, int> kind; // 0 private, 1 slot, 2 uniform, 3 remat
	std::set<AllocaInst *> escaped;
	std::map<AllocaInst *, unsigned> off; // slot or uniform offset
	unsigned slotBytes = 0, uniBytes = 0;
	// An instrumented copy for --sanitize (compiler/kc_kernel.h marks its
	// module): the sanitizer's checks and reports read the running thread
	// and its virtual time from the lane, so each loop keeps them there,
	// and preludes keep no loads (each thread's read is checked as its).
	bool publish;
	// A loop of the body polls (Checker::spins): each yield point's slow
	// call (cta__spin_poll) becomes a test that ends the thread's region
	// there when it spins (a kind-4 entry of bars), and the engine runs
	// the block's threads one at a time (CTA__KC_SPIN, run_spin in
	// sim/exec/regions.c).
	bool spinMode = false;

	Fission(Function &f)
	    : F(f), M(*f.getParent()), C(f.getContext()), DL(f.getParent()->getDataLayout()),
	      publish(M.getNamedGlobal("cta__kc_sanitized") != nullptr)
	{
		argA = F.getArg(0);
		laneA = F.getArg(1);
		ixA = F.getArg(2);
	}

	AllocaInst *allocaOf(Value *p)
	{
		p = p->stripInBoundsConstantOffsets();
		while (auto *G = dyn_cast<GetElementPtrInst>(p))
			p = G->getPointerOperand();
		return dyn_cast<AllocaInst>(p);
	}

	// Inlines every call to a function defined here (kernel.h's helpers),
	// so that the analyses see the body whole.
	void inlineAll()
	{
		for (int round = 0; round < 8; round++) {
			SmallVector<CallBase *, 16> pending;
			for (Instruction &I : instructions(F))
				if (auto *CB = dyn_cast<CallBase>(&I))
					if (Function *c = CB->getCalledFunction())
						if (!c->isDeclaration() && c != &F &&
						    !c->isIntrinsic())
							pending.push_back(CB);
			if (pending.empty())
				return;
			for (CallBase *CB : pending) {
				InlineFunctionInfo IFI;
				InlineFunction(*CB, IFI);
			}
		}
	}

	// A load of field `off` (bytes) of the lane, the loop form's second
	// argument or the lane cta__cur points to (kernel.h's helpers read
	// their thread's indices there), at a constant offset: its type in
	// *ty.
	static bool laneField(LoadInst *L, Value *laneArg, int64_t &off, const DataLayout &DL)
	{
		if (L->isVolatile() || L->isAtomic())
			return false;
		APInt ap(64, 0);
		Value *b = L->getPointerOperand()->stripAndAccumulateConstantOffsets(DL, ap, true);
		off = ap.getSExtValue();
		if (b == laneArg)
			return true;
		auto *P = dyn_cast<LoadInst>(b);
		if (!P || !P->getType()->isPointerTy())
			return false;
		Value *g = P->getPointerOperand();
		if (auto *II = dyn_cast<IntrinsicInst>(g))
			if (II->getIntrinsicID() == Intrinsic::threadlocal_address)
				g = II->getArgOperand(0);
		auto *G = dyn_cast<GlobalVariable>(g->stripPointerCasts());
		return G && G->getName() == "cta__cur";
	}
	// The lane's threadIdx, blockIdx, blockDim and gridDim (struct
	// cta__lane's first 48 bytes, laid out as struct cta__idx's: checked
	// in sim/exec/regions.c): while a thread of the loop form runs, the
	// same as the index block's (a spinning body's rematerialised values).
	// (Through variables stored once: registers the body keeps in them.)
	bool laneIdx(LoadInst *L, int64_t &off)
	{
		if (!spinMode || L->isVolatile() || L->isAtomic() || !L->getType()->isIntegerTy(32))
			return false;
		Value *p = L->getPointerOperand();
		int64_t total = 0;
		for (int d = 0; d < 8; d++) {
			APInt ap(64, 0);
			Value *b = p->stripAndAccumulateConstantOffsets(DL, ap, true);
			total += ap.getSExtValue();
			bool lane = b == laneA;
			if (auto *P = dyn_cast<LoadInst>(b)) {
				if (auto *A = dyn_cast<AllocaInst>(P->getPointerOperand())) {
					StoreInst *S = onlyStore(A);
					if (!S)
						return false;
					p = S->getValueOperand();
					continue;
				}
				Value *g = P->getPointerOperand();
				if (auto *II = dyn_cast<IntrinsicInst>(g))
					if (II->getIntrinsicID() == Intrinsic::threadlocal_address)
						g = II->getArgOperand(0);
				auto *G = dyn_cast<GlobalVariable>(g->stripPointerCasts());
				lane = G && G->getName() == "cta__cur" && !P->isVolatile();
			}
			off = total;
			return lane && off >= 0 && off + 4 <= 48 && off % 4 == 0;
		}
		return false;
	}

	std::string prepare()
	{
		inlineAll();
		// A spinning body has no work-stealing loop (checked below), so its
		// thread is never inside one: kernel.h's blockIdx of a helper then
		// reads the lane's block index, never cta__blockidx_in_body (the
		// lane's steal_depth, at byte 72, is 0), and the thread's indices
		// it reads of the lane can be computed again (laneIdx).
		if (spinMode) {
			bool ws = false;
			for (Instruction &I : instructions(F))
				if (auto *CB = dyn_cast<CallBase>(&I))
					if (Function *c = CB->getCalledFunction())
						ws = ws || isWorkSteal(c->getName());
			SmallVector<LoadInst *, 16> depth;
			for (Instruction &I : instructions(F)) {
				int64_t off;
				if (auto *L = dyn_cast<LoadInst>(&I))
					if (!ws && laneField(L, laneA, off, DL) && off == 72 &&
					    L->getType()->isIntegerTy(16))
						depth.push_back(L);
			}
			for (LoadInst *L : depth) {
				L->replaceAllUsesWith(ConstantInt::get(L->getType(), 0));
				L->eraseFromParent();
			}
			if (!depth.empty())
				foldConstants(F);
		}
		// Lifetime markers and debug intrinsics name allocas that become
		// slots; the loop does not need them.
		SmallVector<Instruction *, 32> dead;
		for (Instruction &I : instructions(F))
			if (auto *II = dyn_cast<IntrinsicInst>(&I))
				if (II->isLifetimeStartOrEnd() || isa<DbgInfoIntrinsic>(II))
					dead.push_back(II);
		for (Instruction *I : dead)
			I->eraseFromParent();
		for (Instruction &I : instructions(F)) {
			if (auto *A = dyn_cast<AllocaInst>(&I))
				if (A->getParent() != &F.getEntryBlock() || !A->isStaticAlloca())
					return "a variable-length array" + where(I);
			if (auto *CB = dyn_cast<CallBase>(&I)) {
				if (CB->isInlineAsm())
					continue;
				Function *c = CB->getCalledFunction();
				if (c && !c->isDeclaration() && !c->isIntrinsic() && c != &F)
					return "a call to " + c->getName().str() +
					       " that could not be inlined";
				if (c && (c->getName() == kBarrier || isWorkSteal(c->getName()) ||
				          c->getName() == kWait || c->getName() == kCluster ||
				          (spinMode && c->getName() == "cta__spin_poll")))
					bars.push_back(cast<CallInst>(CB));
				if (isa<InvokeInst>(CB) || (c && c->getName() == "setjmp"))
					return "an invoke or setjmp" + where(I);
			}
		}
		// A work-stealing loop: each thread records its arguments and does
		// the loop's own entry (cta__kc_ws_enter), then waits at a barrier
		// of the loop form's, after which the engine runs the loop for the
		// whole block (sim/exec/regions.c). The marker call only stands
		// for that barrier: its block is never run.
		for (CallInst *&CI : bars) {
			if (CI->getCalledFunction()->getName() == "cta__spin_poll") {
				// if (cta__kc_spin_blocks(file, line)) [spin j]: a thread
				// that spins ends its region here, its clock a poll round
				// on; it goes on after the yield point once the engine
				// resumes it (an EV_POLL).
				Type *ptrT = PointerType::getUnqual(C), *i32 = Type::getInt32Ty(C);
				IRBuilder<> b(CI);
				FunctionCallee blocks =
				    M.getOrInsertFunction("cta__kc_spin_blocks", i32, ptrT, i32);
				CallInst *q = b.CreateCall(
				    blocks, {CI->getArgOperand(0),
				             b.CreateZExtOrTrunc(CI->getArgOperand(1), i32)});
				q->setDebugLoc(CI->getDebugLoc());
				Instruction *thenT = SplitBlockAndInsertIfThen(
				    b.CreateICmpNE(q, b.getInt32(0)), CI, false);
				FunctionCallee mark = M.getOrInsertFunction(
				    "cta__kc_ws_point", Type::getVoidTy(C), ptrT, i32);
				CallInst *m = CallInst::Create(
				    mark, {CI->getArgOperand(0), CI->getArgOperand(1)}, "", thenT);
				m->setDebugLoc(CI->getDebugLoc());
				CI->eraseFromParent();
				CI = m;
				barKind.push_back(4);
				continue;
			}
			if (CI->getCalledFunction()->getName() == kWait) {
				// if (cta__kc_wait_blocks(bar, parity)) { [wait j]
				// try_wait(...) } else try_wait(...): the call after the
				// split does the wait's own work (the thread's time and
				// observation) once the block is woken.
				Type *ptrT = PointerType::getUnqual(C), *i32 = Type::getInt32Ty(C);
				IRBuilder<> b(CI);
				FunctionCallee blocks =
				    M.getOrInsertFunction("cta__kc_wait_blocks", i32, ptrT, i32);
				CallInst *q = b.CreateCall(
				    blocks, {CI->getArgOperand(0),
				             b.CreateZExtOrTrunc(CI->getArgOperand(1), i32)});
				q->setDebugLoc(CI->getDebugLoc());
				waitAt.push_back(q);
				Instruction *thenT = nullptr, *elseT = nullptr;
				SplitBlockAndInsertIfThenElse(b.CreateICmpNE(q, b.getInt32(0)), CI,
				                              &thenT, &elseT);
				FunctionCallee mark = M.getOrInsertFunction(
				    "cta__kc_ws_point", Type::getVoidTy(C), ptrT, i32);
				CallInst *m = CallInst::Create(
				    mark, {CI->getArgOperand(2), CI->getArgOperand(3)}, "", thenT);
				m->setDebugLoc(CI->getDebugLoc());
				auto *c1 = cast<CallInst>(CI->clone());
				c1->insertBefore(thenT);
				auto *c2 = cast<CallInst>(CI->clone());
				c2->insertBefore(elseT);
				PHINode *phi = PHINode::Create(CI->getType(), 2, "", CI);
				phi->addIncoming(c1, thenT->getParent());
				phi->addIncoming(c2, elseT->getParent());
				CI->replaceAllUsesWith(phi);
				CI->eraseFromParent();
				CI = m;
				barKind.push_back(2);
				continue;
			}
			bool te = CI->getCalledFunction()->getName() == "cta__try_cancel_blocks";
			if (!te &&
			    CI->getCalledFunction()->getName() != "cta__for_each_canceled_block") {
				barKind.push_back(
				    CI->getCalledFunction()->getName() == kCluster ? 3 : 0);
				continue;
			}
			Type *ptrT = PointerType::getUnqual(C), *i32 = Type::getInt32Ty(C);
			IRBuilder<> b(CI);
			unsigned o = te ? 1 : 0;
			Value *lead = te ? b.CreateZExt(CI->getArgOperand(1), i32) : b.getInt32(0);
			FunctionCallee enter =
			    M.getOrInsertFunction("cta__kc_ws_enter", Type::getVoidTy(C), i32, i32,
			                          i32, ptrT, ptrT, ptrT, i32);
			CallInst *e = b.CreateCall(
			    enter, {b.getInt32(te ? 1 : 0), CI->getArgOperand(0), lead,
			            CI->getArgOperand(1 + o), CI->getArgOperand(2 + o),
			            CI->getArgOperand(3 + o), CI->getArgOperand(4 + o)});
			e->setDebugLoc(CI->getDebugLoc());
			FunctionCallee mark = M.getOrInsertFunction("cta__kc_ws_point",
			                                            Type::getVoidTy(C), ptrT, i32);
			CallInst *m = b.CreateCall(
			    mark, {CI->getArgOperand(3 + o), CI->getArgOperand(4 + o)});
			m->setDebugLoc(CI->getDebugLoc());
			CI->eraseFromParent();
			CI = m;
			barKind.push_back(1);
			wsEnter.push_back(e);
		}
		if (wsEnter.size() > 1)
			return "more than one work-stealing loop in the body";
		// Spinning threads: the engine's one-at-a-time rounds of a CTA
		// (run_spin) know __syncthreads and yield points, no more.
		if (spinMode && (!wsEnter.empty() || !waitAt.empty() ||
		                 std::count(barKind.begin(), barKind.end(), 3)))
			return "a loop that spins on memory beside a work-stealing loop, an "
			       "mbarrier wait or a cluster barrier";
		// A cluster barrier: the engine runs the cluster's threads one
		// at a time in the fiber path's order (run_cluster), which knows
		// cluster barriers and a block-wide mbarrier wait, no more.
		if (std::count(barKind.begin(), barKind.end(), 3)) {
			if (std::count(barKind.begin(), barKind.end(), 0))
				return "a cluster barrier and a __syncthreads in one body";
			if (!wsEnter.empty())
				return "a cluster barrier and a work-stealing loop in one body";
			if (waitAt.size() > 1)
				return "a cluster barrier and more than one mbarrier wait in one "
				       "body";
		}
		// Several waits: the engine keeps each thread's observations of
		// the mbarriers apart (CTA__KC_OBS), where one lane runs them all.
		if (bars.size() > kMaxBarriers)
			return "more than " + std::to_string(kMaxBarriers) + " barriers";
		// (A yield point's location may be a choice of several, where
		// clang merged the calls of two branches: the engine reads where a
		// thread spins from cta__kc_spin_blocks, its table entry none.)
		for (size_t j = 0; j < bars.size(); j++)
			if (barKind[j] != 4 && (!isa<Constant>(bars[j]->getArgOperand(0)) ||
			                        !isa<ConstantInt>(bars[j]->getArgOperand(1))))
				return "a barrier whose location is not a constant" +
				       where(*bars[j]);
		// The barrier alone in its block; the code after it starts a region.
		entryOf.push_back(&F.getEntryBlock());
		for (CallInst *CI : bars) {
			BasicBlock *b = SplitBlock(CI->getParent(), CI, (DominatorTree *)nullptr);
			BasicBlock *after =
			    SplitBlock(b, CI->getNextNode(), (DominatorTree *)nullptr);
			barBB.push_back(b);
			entryOf.push_back(after);
		}
		// Registers to memory (reg2mem): across blocks values then live
		// only in allocas, which the classification below places.
		Instruction *pt = &*F.getEntryBlock().getFirstInsertionPt();
		while (isa<AllocaInst>(pt))
			pt = pt->getNextNode();
		SmallVector<Instruction *, 32> demote;
		for (BasicBlock &bb : F)
			for (Instruction &I : bb) {
				if (isa<AllocaInst>(I) && bb.isEntryBlock())
					continue;
				for (User *U : I.users()) {
					auto *UI = cast<Instruction>(U);
					if (UI->getParent() != &bb || isa<PHINode>(UI)) {
						demote.push_back(&I);
						break;
					}
				}
			}
		for (Instruction *I : demote)
			DemoteRegToStack(*I, false, pt);
		SmallVector<PHINode *, 16> phis;
		for (BasicBlock &bb : F)
			for (PHINode &P : bb.phis())
				phis.push_back(&P);
		for (PHINode *P : phis)
			DemotePHIToStack(P, pt);
		for (Instruction &I : F.getEntryBlock())
			if (auto *A = dyn_cast<AllocaInst>(&I))
				allocas.push_back(A);
		// The blocks of each region: from its entry up to barriers and
		// returns.
		std::set<BasicBlock *> isBar(barBB.begin(), barBB.end());
		for (BasicBlock *e : entryOf) {
			std::vector<BasicBlock *> list;
			std::set<BasicBlock *> seen;
			SmallVector<BasicBlock *, 16> stack{e};
			seen.insert(e);
			while (!stack.empty()) {
				BasicBlock *b = stack.pop_back_val();
				list.push_back(b);
				for (BasicBlock *s : successors(b))
					if (!isBar.count(s) && seen.insert(s).second)
						stack.push_back(s);
			}
			blocks.push_back(list);
		}
		return "";
	}

	// Uses of A other than loads, stores to it, GEPs, memory intrinsics.
	bool escapes(Value *V, AllocaInst *A, int depth = 0)
	{
		if (depth > 8)
			return true;
		for (User *U : V->users()) {
			if (isa<LoadInst>(U))
				continue;
			if (auto *S = dyn_cast<StoreInst>(U)) {
				if (S->getValueOperand() == V)
					return true;
				continue;
			}
			if (isa<GetElementPtrInst>(U) || isa<BitCastInst>(U)) {
				if (escapes(U, A, depth + 1))
					return true;
				continue;
			}
			if (auto *MI = dyn_cast<MemIntrinsic>(U)) {
				(void)MI;
				continue;
			}
			return true;
		}
		return false;
	}

	// Backward liveness of A at each block's start: read before written.
	std::map<BasicBlock *, bool> liveIn(AllocaInst *A)
	{
		std::map<BasicBlock *, int> local; // 1 read first, 2 killed first, 0 none
		for (BasicBlock &bb : F) {
			int st = 0;
			for (Instruction &I : bb) {
				if (auto *L = dyn_cast<LoadInst>(&I)) {
					if (allocaOf(L->getPointerOperand()) == A) {
						st = 1;
						break;
					}
				} else if (auto *S = dyn_cast<StoreInst>(&I)) {
					if (S->getPointerOperand() == A &&
					    DL.getTypeStoreSize(S->getValueOperand()->getType()) ==
					        DL.getTypeAllocSize(A->getAllocatedType()) &&
					    !A->isArrayAllocation()) {
						st = 2;
						break;
					}
				} else if (auto *MI = dyn_cast<MemIntrinsic>(&I)) {
					if (allocaOf(MI->getDest()) == A ||
					    (isa<MemTransferInst>(MI) &&
					     allocaOf(cast<MemTransferInst>(MI)->getSource()) ==
					         A)) {
						st = 1;
						break;
					}
				}
			}
			local[&bb] = st;
		}
		std::map<BasicBlock *, bool> in;
		for (BasicBlock &bb : F)
			in[&bb] = local[&bb] == 1;
		for (bool ch = true; ch;) {
			ch = false;
			for (BasicBlock &bb : F) {
				if (in[&bb] || local[&bb] == 2)
					continue;
				for (BasicBlock *s : successors(&bb))
					if (in[s]) {
						in[&bb] = true;
						ch = true;
						break;
					}
			}
		}
		return in;
	}

	// What the body writes of shared memory, where the engine can use it
	// to zero less of a block's shared memory (sim/exec/regions.c): each
	// entry a declared array (`site`) of which the thread of rank t
	// writes `size` bytes at t * size.
	//  - cover: the first region writes these whole, each thread once on
	//    every path through it, and reads no shared memory: after the
	//    block's first round these bytes hold what it wrote, whatever they
	//    held before, so they need no zeroing before it;
	//  - write: every write of the body to shared memory is one of these
	//    (what the block leaves non-zero, for the next block on the arena).
	// Both empty when anything else could read or write shared memory: a
	// shared address passed to a call or stored to memory, a function
	// called from the body that declares shared memory itself.
	struct Cover {
		GlobalVariable *site;
		uint64_t size;
	};
	struct SmemFacts {
		std::vector<Cover> cover, write;
	};
	// The 32-bit field of the body's index block (struct cta__idx) at byte
	// `off` (V through `through`'s variables).
	template <typename Through> bool isIdxField(Value *V, int64_t off, Through &through)
	{
		auto *L = dyn_cast<LoadInst>(through(V));
		if (!L || !L->getType()->isIntegerTy(32) || L->isVolatile())
			return false;
		Value *p = L->getPointerOperand();
		int64_t o = 0;
		for (int i = 0; i < 8; i++) {
			p = through(p);
			auto *G = dyn_cast<GEPOperator>(p);
			if (!G)
				break;
			APInt ap(DL.getIndexTypeSizeInBits(G->getType()), 0);
			if (!G->accumulateConstantOffset(DL, ap))
				return false;
			o += ap.getSExtValue();
			p = G->getPointerOperand();
		}
		return p == ixA && o == off;
	}
	// a op b, in either order, with pa(a) and pb(b).
	template <typename PA, typename PB> static bool both(Value *V, unsigned op, PA pa, PB pb)
	{
		auto *B = dyn_cast<BinaryOperator>(V);
		if (!B || B->getOpcode() != op)
			return false;
		return (pa(B->getOperand(0)) && pb(B->getOperand(1))) ||
		       (pa(B->getOperand(1)) && pb(B->getOperand(0)));
	}
	// The thread's rank as cta__idx_rank computes it (kernel.h): tid.x +
	// bdim.x * (tid.y + bdim.y * tid.z), widened or not.
	template <typename Through> bool isRank(Value *V, Through &through)
	{
		V = through(V);
		auto f = [&](int64_t off) {
			return
			    [this, off, &through](Value *v) { return isIdxField(v, off, through); };
		};
		auto inner = [&](Value *v) {
			return both(through(v), Instruction::Add, f(4), [&](Value *w) {
				return both(through(w), Instruction::Mul, f(28), f(8));
			});
		};
		return both(V, Instruction::Add, f(0), [&](Value *v) {
			return both(through(v), Instruction::Mul, f(24), inner);
		});
	}

	SmemFacts smemFacts()
	{
		SmemFacts none;
		// (Calls only to these, as CTA__KC_LOCAL_SMEM's: no function of
		// the body's declares shared memory of its own.)
		for (Instruction &I : instructions(F))
			if (auto *CB = dyn_cast<CallBase>(&I)) {
				Function *c = CB->getCalledFunction();
				if (CB->isInlineAsm() || (c && c->isIntrinsic()))
					continue;
				StringRef nm = c ? c->getName() : "";
				if (nm != "cta__shared" && nm != "cta__shared_dynamic" &&
				    nm != "cta__spin_poll" && nm != "cta__poll_thread" &&
				    nm != kBarrier && !nm.startswith("cta__kc_"))
					return none;
			}
		// The first region's blocks, as they are now (the preludes split
		// some since prepare listed them).
		std::set<BasicBlock *> isBar(barBB.begin(), barBB.end());
		std::set<BasicBlock *> r0{entryOf[0]};
		{
			SmallVector<BasicBlock *, 16> st{entryOf[0]};
			while (!st.empty())
				for (BasicBlock *nx : successors(st.pop_back_val()))
					if (!isBar.count(nx) && r0.insert(nx).second)
						st.push_back(nx);
		}
		// Every value that may hold a shared-memory address, and the
		// stores through one.
		SmallVector<Value *, 16> work;
		std::set<Value *> seen;
		for (Instruction &I : instructions(F))
			if (auto *CB = dyn_cast<CallInst>(&I))
				if (Function *c = CB->getCalledFunction())
					if (c->getName() == "cta__shared" ||
					    c->getName() == "cta__shared_dynamic") {
						work.push_back(CB);
						seen.insert(CB);
					}
		SmallVector<StoreInst *, 8> stores;
		bool coverOk = true, writeOk = true;
		auto add = [&](Value *v) {
			if (seen.insert(v).second)
				work.push_back(v);
		};
		while (!work.empty()) {
			Value *V = work.pop_back_val();
			for (User *U : V->users()) {
				auto *I = dyn_cast<Instruction>(U);
				if (!I)
					return none;
				bool inR0 = r0.count(I->getParent()) != 0;
				if (auto *G = dyn_cast<GetElementPtrInst>(I)) {
					if (G->getPointerOperand() != V)
						return none;
					add(G);
				} else if (auto *S = dyn_cast<StoreInst>(I)) {
					if (S->getPointerOperand() == V) {
						stores.push_back(S);
						continue;
					}
					// A shared address kept in a variable of the body's,
					// used only by loads and stores.
					auto *A = dyn_cast<AllocaInst>(S->getPointerOperand());
					if (!A || S->getValueOperand() != V)
						return none;
					for (User *AU : A->users()) {
						if (auto *L = dyn_cast<LoadInst>(AU))
							add(L);
						else if (!isa<StoreInst>(AU) ||
						         cast<StoreInst>(AU)->getPointerOperand() !=
						             A)
							return none;
					}
				} else if (isa<LoadInst>(I)) {
					coverOk = coverOk && !inR0;
				} else if (isa<AtomicRMWInst>(I) || isa<AtomicCmpXchgInst>(I)) {
					// (Operand 0 is the address.)
					if (I->getOperand(0) != V)
						return none;
					coverOk = coverOk && !inR0;
					writeOk = false;
				} else if (isa<ICmpInst>(I) || isa<DbgInfoIntrinsic>(I)) {
					continue;
				} else if (isa<SelectInst>(I) || isa<PHINode>(I)) {
					add(I);
				} else {
					return none;
				}
			}
		}
		DominatorTree DT(F);
		LoopInfo LI(DT);
		// V through variables stored once (the body's, or reg2mem's).
		auto through = [&](Value *V) {
			for (int i = 0; i < 8; i++) {
				if (auto *C = dyn_cast<CastInst>(V))
					if (C->getOpcode() == Instruction::ZExt ||
					    C->getOpcode() == Instruction::SExt) {
						V = C->getOperand(0);
						continue;
					}
				auto *L = dyn_cast<LoadInst>(V);
				auto *A =
				    L ? dyn_cast<AllocaInst>(L->getPointerOperand()) : nullptr;
				StoreInst *S = A ? onlyStore(A) : nullptr;
				if (!S || !DT.dominates(S, L))
					break;
				V = S->getValueOperand();
			}
			return V;
		};
		// S writes size bytes at site + rank * size.
		auto ranked = [&](StoreInst *S, Cover &out) {
			auto *G = dyn_cast<GetElementPtrInst>(through(S->getPointerOperand()));
			if (!G || G->getNumIndices() != 1)
				return false;
			auto *root = dyn_cast<CallInst>(through(G->getPointerOperand()));
			Function *rf = root ? root->getCalledFunction() : nullptr;
			auto *site = rf && rf->getName() == "cta__shared"
			                 ? dyn_cast<GlobalVariable>(root->getArgOperand(0))
			                 : nullptr;
			uint64_t es = DL.getTypeAllocSize(G->getSourceElementType());
			if (!site || !isRank(G->getOperand(1), through) ||
			    DL.getTypeStoreSize(S->getValueOperand()->getType()) != es)
				return false;
			out = {site, es};
			return true;
		};
		// On every path of the first region: none reaches a barrier or
		// the end without passing S, and S is in no loop.
		auto everyPath = [&](StoreInst *S) {
			BasicBlock *sb = S->getParent();
			if (LI.getLoopFor(sb))
				return false;
			std::set<BasicBlock *> vis{sb};
			SmallVector<BasicBlock *, 16> st;
			if (entryOf[0] != sb) {
				st.push_back(entryOf[0]);
				vis.insert(entryOf[0]);
			}
			while (!st.empty()) {
				BasicBlock *b = st.pop_back_val();
				if (isa<ReturnInst>(b->getTerminator()) ||
				    isa<UnreachableInst>(b->getTerminator()))
					return false;
				for (BasicBlock *nx : successors(b)) {
					if (isBar.count(nx))
						return false;
					if (vis.insert(nx).second)
						st.push_back(nx);
				}
			}
			return true;
		};
		SmemFacts out;
		auto addTo = [](std::vector<Cover> &v, const Cover &c) {
			for (auto &x : v)
				if (x.site == c.site && x.size == c.size)
					return;
			v.push_back(c);
		};
		bool anyR0 = false;
		for (StoreInst *S : stores) {
			Cover c;
			bool ok = ranked(S, c);
			writeOk = writeOk && ok;
			if (ok && writeOk)
				addTo(out.write, c);
			if (r0.count(S->getParent())) {
				anyR0 = true;
				coverOk = coverOk && ok && everyPath(S);
				if (coverOk)
					addTo(out.cover, c);
			}
		}
		// (sim/exec/regions.c's KC_COVER_MAX)
		if (!coverOk || !anyR0 || out.cover.size() > 8)
			out.cover.clear();
		if (!writeOk || out.write.size() > 8)
			out.write.clear();
		return out;
	}

	// The single store to A, or null.
	StoreInst *onlyStore(AllocaInst *A)
	{
		if (escaped.count(A))
			return nullptr;
		StoreInst *one = nullptr;
		for (User *U : A->users()) {
			if (auto *S = dyn_cast<StoreInst>(U)) {
				if (one)
					return nullptr;
				one = S;
			} else if (!isa<LoadInst>(U)) {
				return nullptr;
			}
		}
		return one;
	}

	// V is argument `arg` (or its copy in a variable stored once).
	bool isArgPtr(Value *V, Value *arg, int depth = 0)
	{
		if (V == arg)
			return true;
		if (depth > 8)
			return false;
		if (auto *L = dyn_cast<LoadInst>(V))
			if (auto *A = dyn_cast<AllocaInst>(L->getPointerOperand()))
				if (StoreInst *S = onlyStore(A))
					return isArgPtr(S->getValueOperand(), arg, depth + 1);
		return false;
	}
	bool isArgsPtr(Value *V)
	{
		return isArgPtr(V, argA);
	}

	// The base of a load's address and its constant offset, if constant.
	Value *baseOf(Value *p, int64_t &o, bool &constOff)
	{
		APInt ap(64, 0);
		Value *b = p->stripAndAccumulateConstantOffsets(DL, ap, true);
		o = ap.getSExtValue();
		constOff = true;
		if (isa<GetElementPtrInst>(b)) {
			constOff = false;
			while (auto *G = dyn_cast<GetElementPtrInst>(b))
				b = G->getPointerOperand()->stripInBoundsConstantOffsets();
		}
		return b;
	}

	// A pure function of the thread's and block's indices and the
	// arguments: it can be computed again at each thread's start.
	bool remat(Value *V, int depth = 0)
	{
		if (depth > 24)
			return false;
		if (isa<Constant>(V))
			return true;
		// (The lane too: the same for every thread, and a pointer the
		// loop form then sees as its own lane, LaneScopePass.)
		if (V == argA || V == ixA || V == laneA)
			return true;
		auto *I = dyn_cast<Instruction>(V);
		if (!I)
			return false;
		if (auto *L = dyn_cast<LoadInst>(I)) {
			if (L->isVolatile() || L->isAtomic())
				return false;
			if (auto *A = dyn_cast<AllocaInst>(L->getPointerOperand())) {
				StoreInst *S = onlyStore(A);
				return S && remat(S->getValueOperand(), depth + 1);
			}
			int64_t lo;
			if (laneIdx(L, lo))
				return true;
			int64_t o;
			bool co;
			Value *b = baseOf(L->getPointerOperand(), o, co);
			return co && (isArgPtr(b, ixA) || isArgsPtr(b));
		}
		if (auto *BO = dyn_cast<BinaryOperator>(I)) {
			switch (BO->getOpcode()) {
			case Instruction::UDiv:
			case Instruction::SDiv:
			case Instruction::URem:
			case Instruction::SRem: {
				auto *ci = dyn_cast<ConstantInt>(BO->getOperand(1));
				if (!ci || ci->isZero())
					return false;
				break;
			}
			default:
				break;
			}
		} else if (auto *G = dyn_cast<GetElementPtrInst>(I)) {
			(void)G;
		} else if (!isa<CastInst>(I) && !isa<CmpInst>(I) && !isa<SelectInst>(I) &&
		           !isa<FreezeInst>(I)) {
			return false;
		}
		for (Value *op : I->operands())
			if (!remat(op, depth + 1))
				return false;
		return true;
	}

	Value *rematEmit(Value *V, IRBuilder<> &B, ValueToValueMapTy &map)
	{
		if (isa<Constant>(V))
			return V;
		if (map.count(V))
			return map[V];
		auto *I = cast<Instruction>(V);
		if (auto *L = dyn_cast<LoadInst>(I)) {
			if (auto *A = dyn_cast<AllocaInst>(L->getPointerOperand())) {
				Value *v = rematEmit(onlyStore(A)->getValueOperand(), B, map);
				map[V] = v;
				return v;
			}
			int64_t lo;
			if (laneIdx(L, lo)) {
				// (From the index block: the running thread's.)
				Value *v = B.CreateLoad(L->getType(),
				                        B.CreateConstInBoundsGEP1_64(
				                            B.getInt8Ty(), map[ixA], (uint64_t)lo));
				map[V] = v;
				return v;
			}
		}
		Instruction *c = I->clone();
		for (unsigned i = 0; i < c->getNumOperands(); i++)
			c->setOperand(i, rematEmit(I->getOperand(i), B, map));
		c->setDebugLoc(DebugLoc());
		B.Insert(c);
		map[V] = c;
		return c;
	}

	// Block-uniform values: every thread computes the same.
	std::set<AllocaInst *> uni;
	std::set<BasicBlock *> divergent;
	std::map<Value *, bool> memo;
	bool uniform(Value *V, int depth = 0)
	{
		if (isa<Constant>(V) || isa<Argument>(V))
			return true;
		// The address of a variable is the same for every thread, but
		// for a per-thread slot.
		if (auto *A = dyn_cast<AllocaInst>(V))
			return !escaped.count(A) && (!kind.count(A) || kind[A] != 1);
		auto it = memo.find(V);
		if (it != memo.end())
			return it->second;
		bool r = false;
		auto *I = dyn_cast<Instruction>(V);
		if (!I || depth > 64) {
			r = false;
		} else if (auto *L = dyn_cast<LoadInst>(I)) {
			int64_t o;
			bool co;
			Value *b = baseOf(L->getPointerOperand(), o, co);
			if (L->isVolatile() || L->isAtomic())
				r = false;
			else if (isArgPtr(b, ixA))
				r = co && o >= 12;
			else if (auto *A = dyn_cast<AllocaInst>(b))
				r = co && uni.count(A);
			else
				r = co && isArgsPtr(b);
		} else if (auto *CB = dyn_cast<CallBase>(I)) {
			Function *c = CB->getCalledFunction();
			r = c && (c->getName() == "cta__shared" ||
			          c->getName() == "cta__shared_dynamic");
			for (Value *a : CB->args())
				r = r && uniform(a, depth + 1);
		} else if (isa<BinaryOperator>(I) || isa<CastInst>(I) || isa<CmpInst>(I) ||
		           isa<SelectInst>(I) || isa<GetElementPtrInst>(I) || isa<FreezeInst>(I) ||
		           isa<ExtractValueInst>(I) || isa<InsertValueInst>(I) ||
		           isa<UnaryOperator>(I)) {
			r = true;
			for (Value *op : I->operands())
				r = r && uniform(op, depth + 1);
		}
		memo[V] = r;
		return r;
	}

	void findUniform()
	{
		for (AllocaInst *A : allocas)
			if (!escaped.count(A))
				uni.insert(A);
		for (bool ch = true; ch;) {
			ch = false;
			memo.clear();
			divergent.clear();
			PostDominatorTree PDT(F);
			for (BasicBlock &bb : F) {
				Instruction *T = bb.getTerminator();
				Value *cond = nullptr;
				if (auto *Br = dyn_cast<BranchInst>(T)) {
					if (Br->isConditional())
						cond = Br->getCondition();
				} else if (auto *Sw = dyn_cast<SwitchInst>(T)) {
					cond = Sw->getCondition();
				}
				if (!cond || uniform(cond))
					continue;
				auto *node = PDT.getNode(&bb);
				BasicBlock *join =
				    node && node->getIDom() ? node->getIDom()->getBlock() : nullptr;
				SmallVector<BasicBlock *, 16> stack;
				for (BasicBlock *s : successors(&bb))
					stack.push_back(s);
				while (!stack.empty()) {
					BasicBlock *b = stack.pop_back_val();
					if (b == join || !divergent.insert(b).second)
						continue;
					for (BasicBlock *s : successors(b))
						stack.push_back(s);
				}
			}
			for (BasicBlock &bb : F)
				for (Instruction &I : bb) {
					AllocaInst *A = nullptr;
					bool ok = true;
					if (auto *S = dyn_cast<StoreInst>(&I)) {
						A = allocaOf(S->getPointerOperand());
						ok = !divergent.count(&bb) &&
						     uniform(S->getValueOperand());
					} else if (auto *MI = dyn_cast<MemIntrinsic>(&I)) {
						A = allocaOf(MI->getDest());
						ok = false;
					}
					if (A && !ok && uni.erase(A))
						ch = true;
				}
		}
	}

	// Each slot's bytes a thread (its size at its own alignment) and where
	// its array starts (off, in n-thread units: slots + n * off). Slots of
	// one size and alignment share an array where no thread ever holds
	// both: no block of the body has both live in it or accessed (a
	// thread runs the body's blocks in its order whatever loop form runs
	// it, and other threads' elements of an array are apart). A slot
	// whose address escapes has an array of its own.
	std::map<AllocaInst *, uint64_t> eltBytes;
	struct SlotArray {
		uint64_t elt, al, off;
		std::set<BasicBlock *> busy; // (empty and shut: an escaped slot's)
		bool shut;
		std::vector<AllocaInst *> members;
	};
	std::vector<SlotArray> slotArrays;
	std::map<AllocaInst *, std::map<BasicBlock *, bool>> slotLive;
	// Whether array a may hold a value read after a thread goes on at
	// block e (a region's entry): one of its slots is live there.
	bool arrayLive(const SlotArray &a, BasicBlock *e)
	{
		if (a.shut)
			return true;
		for (AllocaInst *A : a.members)
			if (slotLive[A][e])
				return true;
		return false;
	}
	void placeSlots(const std::vector<AllocaInst *> &list,
	                std::map<AllocaInst *, std::map<BasicBlock *, bool>> &live)
	{
		using Array = SlotArray;
		std::vector<Array> &arrays = slotArrays;
		arrays.reserve(list.size());
		for (AllocaInst *A : list) {
			uint64_t size = DL.getTypeAllocSize(A->getAllocatedType()) *
			                cast<ConstantInt>(A->getArraySize())->getZExtValue();
			uint64_t al = A->getAlign().value();
			uint64_t elt = (size + al - 1) / al * al;
			eltBytes[A] = elt;
			bool shut = escaped.count(A) != 0;
			std::set<BasicBlock *> busy;
			if (!shut) {
				auto &in = live[A];
				for (BasicBlock &bb : F) {
					bool on = in[&bb];
					for (BasicBlock *s : successors(&bb))
						on = on || in[s];
					if (on)
						busy.insert(&bb);
				}
				SmallVector<Value *, 16> work{A};
				while (!work.empty()) {
					Value *v = work.pop_back_val();
					for (User *U : v->users()) {
						auto *I = cast<Instruction>(U);
						busy.insert(I->getParent());
						if (isa<GetElementPtrInst>(I) || isa<CastInst>(I))
							work.push_back(I);
					}
				}
			}
			Array *into = nullptr;
			for (Array &a : arrays) {
				if (shut || a.shut || a.elt != elt || a.al != al)
					continue;
				bool clash = false;
				for (BasicBlock *b : busy)
					if (a.busy.count(b)) {
						clash = true;
						break;
					}
				if (!clash) {
					into = &a;
					break;
				}
			}
			if (!into) {
				slotBytes = (slotBytes + al - 1) / al * al;
				arrays.push_back({elt, al, slotBytes, {}, shut, {}});
				slotBytes += elt;
				into = &arrays.back();
			}
			into->busy.insert(busy.begin(), busy.end());
			into->members.push_back(A);
			if (!shut)
				slotLive[A] = live[A];
			off[A] = into->off;
		}
	}

	std::string classify()
	{
		DominatorTree DT(F);
		for (AllocaInst *A : allocas)
			if (escapes(A, A))
				escaped.insert(A);
		findUniform();
		std::map<AllocaInst *, std::map<BasicBlock *, bool>> live;
		std::vector<AllocaInst *> slotList;
		for (AllocaInst *A : allocas) {
			bool cross = escaped.count(A) != 0;
			if (!cross) {
				auto &in = live[A] = liveIn(A);
				for (size_t r = 1; r < entryOf.size() && !cross; r++)
					cross = in[entryOf[r]];
			}
			if (!cross) {
				kind[A] = 0;
				continue;
			}
			// Computed again where a thread starts a region: a pure
			// function of the indices and arguments, stored once before
			// every read of it (a register the body keeps in a
			// variable: its definition dominates its uses).
			StoreInst *S = onlyStore(A);
			bool dom = S && remat(S->getValueOperand());
			for (User *U : A->users())
				if (dom && U != S)
					dom = DT.dominates(S, cast<Instruction>(U));
			uint64_t size = DL.getTypeAllocSize(A->getAllocatedType());
			if (auto *n = dyn_cast<ConstantInt>(A->getArraySize()))
				size *= n->getZExtValue();
			else
				return "a variable-length array";
			uint64_t al = std::max<uint64_t>(16, A->getAlign().value());
			if (dom) {
				kind[A] = 3;
			} else if (uni.count(A) && !A->isArrayAllocation()) {
				kind[A] = 2;
				uniBytes = (uniBytes + al - 1) / al * al;
				off[A] = uniBytes;
				uniBytes += size;
			} else {
				kind[A] = 1;
				slotList.push_back(A);
			}
		}
		placeSlots(slotList, live);
		uniBytes = (uniBytes + 15) / 16 * 16;
		slotBytes = (slotBytes + 15) / 16 * 16;
		if (std::getenv("CTA_KC_VERBOSE") &&
		    std::string(std::getenv("CTA_KC_VERBOSE")) == "2")
			for (AllocaInst *A : allocas)
				errs() << "  " << *A->getAllocatedType() << " line "
				       << [&]() -> std::string {
					for (User *U : A->users())
						if (auto *I = dyn_cast<Instruction>(U))
							if (I->getDebugLoc())
								return std::to_string(
								    I->getDebugLoc().getLine());
					return "?";
				}() << ": "
				    << (const char *[]){"local", "slot", "uniform",
				                        "remat"}[kind[A]]
				    << (escaped.count(A) ? " (escapes)" : "") << "\n";
		if (slotBytes > 65536)
			return "more than 64 KiB of values live across barriers per thread";
		return checkWorkSteal(DT);
	}

	// The engine runs a work-stealing loop for the whole block, every
	// thread taking part with the same body and argument: a loop that part
	// of the block may skip, or call again, or bodies with barriers under
	// divergent control (UB the fiber path reports thread by thread), stay
	// on fibers.
	// Whether V depends on the thread's index (the index block's or the
	// lane's tid, or memory at an address that does).
	std::map<Value *, int> tmemo;
	bool tidDep(Value *V, int depth = 0)
	{
		auto *I = dyn_cast<Instruction>(V);
		if (!I)
			return false;
		if (depth > 48)
			return true;
		auto it = tmemo.find(V);
		if (it != tmemo.end())
			return it->second;
		tmemo[V] = 0;
		bool r = false;
		if (auto *L = dyn_cast<LoadInst>(I)) {
			int64_t o;
			bool co;
			Value *b = baseOf(L->getPointerOperand(), o, co);
			if (isArgPtr(b, ixA) || isArgPtr(b, laneA))
				r = !co || o < 12;
			else if (auto *A = dyn_cast<AllocaInst>(b))
				for (User *U : A->users()) {
					if (auto *S = dyn_cast<StoreInst>(U))
						r = r || tidDep(S->getValueOperand(), depth + 1);
					else if (!isa<LoadInst>(U))
						r = true;
				}
			r = r || tidDep(L->getPointerOperand(), depth + 1);
		} else {
			for (Value *op : I->operands())
				r = r || tidDep(op, depth + 1);
		}
		tmemo[V] = r;
		return r;
	}

	// A wait that part of the block reaches by its thread index (thread 0
	// waits while the others are at a barrier): the fiber path runs those
	// threads apart; the engine parks a block only when they all wait.
	std::string checkWaits()
	{
		if (waitAt.empty())
			return "";
		PostDominatorTree PDT(F);
		std::set<BasicBlock *> tdiv;
		for (BasicBlock &bb : F) {
			auto *Br = dyn_cast<BranchInst>(bb.getTerminator());
			if (!Br || !Br->isConditional() || !tidDep(Br->getCondition()))
				continue;
			auto *node = PDT.getNode(&bb);
			BasicBlock *join =
			    node && node->getIDom() ? node->getIDom()->getBlock() : nullptr;
			SmallVector<BasicBlock *, 16> stack(succ_begin(&bb), succ_end(&bb));
			while (!stack.empty()) {
				BasicBlock *b = stack.pop_back_val();
				if (b == join || !tdiv.insert(b).second)
					continue;
				for (BasicBlock *x : successors(b))
					stack.push_back(x);
			}
		}
		for (CallInst *q : waitAt)
			if (tdiv.count(q->getParent()))
				return "an mbarrier wait" + where(*q) +
				       " that only some threads reach";
		return "";
	}

	std::string checkWorkSteal(DominatorTree &DT)
	{
		std::string w = checkWaits();
		if (!w.empty())
			return w;
		if (wsEnter.empty())
			return "";
		LoopInfo LI(DT);
		memo.clear();
		for (CallInst *e : wsEnter) {
			if (divergent.count(e->getParent()))
				return "a work-stealing loop" + where(*e) +
				       " that part of the block may skip";
			if (LI.getLoopFor(e->getParent()))
				return "a work-stealing loop" + where(*e) + " inside a loop";
			if (!uniform(e->getArgOperand(3)) || !uniform(e->getArgOperand(4)))
				return "a work-stealing loop" + where(*e) +
				       " whose body or argument differ between threads";
		}
		for (size_t j = 0; j < barBB.size(); j++)
			if (divergent.count(barBB[j]))
				return "a barrier" + where(*bars[j]) +
				       " under divergent control beside a work-stealing loop";
		return "";
	}

	// Preludes: the start of each region that every thread runs the same
	// way (block-uniform branches, loads and stores of block-uniform values,
	// shared-memory declarations) runs once per loop, not once per thread;
	// the threads start where it ends (a frontier), with the values it left
	// (snap). A loop over the barrier, its bound and step, so costs nothing
	// per thread.
	std::vector<std::vector<BasicBlock *>> prelude, frontiers;
	std::vector<std::vector<AllocaInst *>> snap;

	bool isBarrierBlock(BasicBlock *b)
	{
		return std::find(barBB.begin(), barBB.end(), b) != barBB.end();
	}

	std::vector<BasicBlock *> reach(BasicBlock *start)
	{
		std::vector<BasicBlock *> list;
		if (isBarrierBlock(start))
			return list;
		std::set<BasicBlock *> seen{start};
		SmallVector<BasicBlock *, 16> stack{start};
		while (!stack.empty()) {
			BasicBlock *b = stack.pop_back_val();
			list.push_back(b);
			for (BasicBlock *s : successors(b))
				if (!isBarrierBlock(s) && seen.insert(s).second)
					stack.push_back(s);
		}
		return list;
	}

	bool onceSafe(Instruction &I)
	{
		if (isa<AllocaInst>(I))
			return true;
		if (auto *Br = dyn_cast<BranchInst>(&I))
			return !Br->isConditional() || uniform(Br->getCondition());
		if (auto *Sw = dyn_cast<SwitchInst>(&I))
			return uniform(Sw->getCondition());
		if (I.isTerminator())
			return false;
		if (auto *S = dyn_cast<StoreInst>(&I)) {
			AllocaInst *A = allocaOf(S->getPointerOperand());
			return A && !S->isVolatile() && !escaped.count(A) && kind[A] != 1 &&
			       uniform(S->getValueOperand()) && uniform(S->getPointerOperand());
		}
		if (isa<CallBase>(I))
			return uniform(&I);
		if (I.mayHaveSideEffects() || I.mayReadFromMemory()) {
			if (!isa<LoadInst>(I) || (publish && !allocaOf(I.getOperand(0))))
				return false;
		}
		return uniform(&I);
	}

	void findPreludes()
	{
		memo.clear();
		size_t nr = entryOf.size();
		prelude.assign(nr, {});
		frontiers.assign(nr, {});
		bool split = false;
		for (size_t r = 0; r < nr; r++) {
			std::set<BasicBlock *> seen{entryOf[r]};
			SmallVector<BasicBlock *, 16> stack{entryOf[r]};
			auto front = [&](BasicBlock *b) {
				if (std::find(frontiers[r].begin(), frontiers[r].end(), b) ==
				    frontiers[r].end())
					frontiers[r].push_back(b);
			};
			while (!stack.empty()) {
				BasicBlock *b = stack.pop_back_val();
				Instruction *bad = nullptr;
				for (Instruction &I : *b)
					if (!onceSafe(I)) {
						bad = &I;
						break;
					}
				if (bad && std::getenv("CTA_KC_VERBOSE") &&
				    std::string(std::getenv("CTA_KC_VERBOSE")) == "2") {
					errs() << "  region " << r << " prelude stops at"
					       << where(*bad) << ": " << *bad << "\n";
				}
				if (bad) {
					Instruction *firstReal = b->getFirstNonPHI();
					while (isa<AllocaInst>(firstReal))
						firstReal = firstReal->getNextNode();
					if (bad == firstReal && !b->isEntryBlock()) {
						front(b);
						continue;
					}
					if (bad == &b->front()) {
						front(b);
						continue;
					}
					BasicBlock *tail =
					    SplitBlock(b, bad, (DominatorTree *)nullptr);
					split = true;
					prelude[r].push_back(b);
					front(tail);
					continue;
				}
				prelude[r].push_back(b);
				for (BasicBlock *s : successors(b)) {
					if (isBarrierBlock(s))
						front(s);
					else if (seen.insert(s).second)
						stack.push_back(s);
				}
			}
			// A region whose prelude is empty starts at its entry.
			if (prelude[r].empty())
				frontiers[r] = {entryOf[r]};
		}
		if (split) {
			// Values computed before a split and used after it go
			// through memory, as everywhere else (reg2mem).
			Instruction *pt = &*F.getEntryBlock().getFirstInsertionPt();
			while (isa<AllocaInst>(pt))
				pt = pt->getNextNode();
			SmallVector<Instruction *, 16> demote;
			for (BasicBlock &bb : F)
				for (Instruction &I : bb) {
					if (isa<AllocaInst>(I) && bb.isEntryBlock())
						continue;
					for (User *U : I.users())
						if (cast<Instruction>(U)->getParent() != &bb) {
							demote.push_back(&I);
							break;
						}
				}
			for (Instruction *I : demote) {
				AllocaInst *A = DemoteRegToStack(*I, false, pt);
				if (A) {
					allocas.push_back(A);
					kind[A] = 0;
					uni.insert(A);
				}
			}
		}
		snap.assign(nr, {});
		for (size_t r = 0; r < nr; r++) {
			std::set<AllocaInst *> st;
			for (AllocaInst *A : allocas)
				if (kind[A] == 2)
					st.insert(A);
			for (BasicBlock *b : prelude[r])
				for (Instruction &I : *b)
					if (auto *S = dyn_cast<StoreInst>(&I))
						if (AllocaInst *A =
						        allocaOf(S->getPointerOperand()))
							if (kind[A] == 0 || kind[A] == 2)
								st.insert(A);
			for (AllocaInst *A : allocas)
				if (st.count(A))
					snap[r].push_back(A);
		}
	}

	// The lane is the simulator's, not the body's: its stores need no test.
	static void nosan(Instruction *I)
	{
		I->setMetadata(LLVMContext::MD_nosanitize, MDNode::get(I->getContext(), {}));
	}

	bool touchesLane(const std::vector<BasicBlock *> &bbs)
	{
		for (BasicBlock *b : bbs)
			for (Instruction &I : *b) {
				if (auto *CB = dyn_cast<CallBase>(&I)) {
					Function *c = CB->getCalledFunction();
					if (!c || !c->isIntrinsic())
						return true;
				}
				if (isArgPtr(&I, laneA))
					return true;
				for (Value *op : I.operands()) {
					if (op == laneA)
						return true;
					if (auto *G =
					        dyn_cast<GlobalValue>(op->stripPointerCasts()))
						if (G->getName() == "cta__cur")
							return true;
				}
			}
		return false;
	}

	Function *build(const std::string &base)
	{
		Type *ptrT = PointerType::getUnqual(C);
		Type *i64 = Type::getInt64Ty(C), *i32 = Type::getInt32Ty(C),
		     *i8 = Type::getInt8Ty(C);
		FunctionType *FT =
		    FunctionType::get(Type::getVoidTy(C), {ptrT, ptrT, ptrT, ptrT}, false);
		Function *G =
		    Function::Create(FT, GlobalValue::InternalLinkage, base + "__kc_fis", M);
		G->setAttributes(
		    AttributeList::get(C, F.getAttributes().getFnAttrs(), AttributeSet(), {}));
		G->removeFnAttr(Attribute::AlwaysInline);
		G->removeFnAttr(Attribute::OptimizeNone);
		G->addFnAttr(Attribute::NoInline);
		G->setSubprogram(F.getSubprogram());
		// Nothing writes the arguments or the index block while a loop
		// runs: their loads can leave the loops.
		for (unsigned a : {0u, 2u}) {
			G->addParamAttr(a, Attribute::NoAlias);
			G->addParamAttr(a, Attribute::ReadOnly);
			G->addParamAttr(a, Attribute::NoCapture);
		}
		// The arguments are a whole argtype (the engine's copy of
		// args_size bytes, sim/engine/sim.c): a load of a field the body
		// makes under a condition (cta_spin_ns's cost in a loop that may
		// not run) can leave the thread loop.
		if (auto *AS = M.getNamedGlobal(base + "__kc_args"))
			if (auto *CA = dyn_cast_or_null<ConstantDataArray>(AS->getInitializer()))
				if (CA->getNumElements() == 2 && CA->getElementAsInteger(0) > 0) {
					G->addDereferenceableParamAttr(0,
					                               CA->getElementAsInteger(0));
					G->addParamAttr(0,
					                Attribute::getWithAlignment(
					                    C, Align(CA->getElementAsInteger(1))));
				}
		G->addDereferenceableParamAttr(2, kIdxSize);
		G->addParamAttr(2, Attribute::getWithAlignment(C, Align(8)));
		Argument *gArgs = G->getArg(0), *gLane = G->getArg(1), *gIx = G->getArg(2),
		         *gRun = G->getArg(3);
		BasicBlock *entry = BasicBlock::Create(C, "fis.entry", G);
		BasicBlock *done = BasicBlock::Create(C, "fis.done", G);
		IRBuilder<> B(entry);
		auto field = [&](IRBuilder<> &b, unsigned f) {
			return b.CreateConstInBoundsGEP1_64(i8, gRun, f * 8);
		};
		// Locals: the private copies of the body's variables, the loop's
		// accumulators, the thread's index block.
		std::map<AllocaInst *, AllocaInst *> priv;
		for (AllocaInst *A : allocas)
			if (kind[A] != 1) {
				auto *P = B.CreateAlloca(A->getAllocatedType(), A->getArraySize(),
				                         A->getName());
				P->setAlignment(A->getAlign());
				priv[A] = P;
			}
		AllocaInst *ixl = B.CreateAlloca(ArrayType::get(i8, kIdxSize), nullptr, "ix");
		ixl->setAlignment(Align(8));
		unsigned nb = bars.size();
		auto acc = [&](const char *n) { return B.CreateAlloca(i64, nullptr, n); };
		AllocaInst *aArr = acc("arrived"), *aExit = acc("exited"), *aBar = acc("barmax"),
		           *aEnd = acc("endmax"), *aWant = acc("want"), *aFirst = acc("firstvt"),
		           *aLast = acc("lastvt");
		AllocaInst *aSeen = B.CreateAlloca(i64, nullptr, "seen");
		AllocaInst *aTb = B.CreateAlloca(Type::getInt1Ty(C), nullptr, "atT");
		AllocaInst *aTe = B.CreateAlloca(Type::getInt1Ty(C), nullptr, "endT");
		B.CreateStore(B.getFalse(), aTb);
		B.CreateStore(B.getFalse(), aTe);
		std::vector<AllocaInst *> flag(nb);
		std::map<std::pair<unsigned, AllocaInst *>, AllocaInst *> next;
		for (unsigned j = 0; j < nb; j++) {
			flag[j] = B.CreateAlloca(Type::getInt1Ty(C), nullptr, "fl");
			B.CreateStore(B.getFalse(), flag[j]);
			for (AllocaInst *A : allocas)
				if (kind[A] == 2)
					next[{j, A}] = B.CreateAlloca(A->getAllocatedType(),
					                              A->getArraySize(), "nx");
		}
		B.CreateMemCpy(ixl, Align(8), gIx, Align(8), kIdxSize);
		auto ld = [&](unsigned f) { return B.CreateLoad(i64, field(B, f)); };
		Value *slots = B.CreateLoad(ptrT, field(B, RF_SLOTS), "slots");
		Value *uin = B.CreateLoad(ptrT, field(B, RF_UIN), "uin");
		Value *uout = B.CreateLoad(ptrT, field(B, RF_UOUT), "uout");
		Value *cont = B.CreateLoad(ptrT, field(B, RF_CONT), "cont");
		Value *T = ld(RF_T);
		Value *n64 = ld(RF_N);
		// The threads lo .. hi-1, then lo2 .. hi2-1 (the rotated order's
		// second run): the current run's bounds live in loS and hiS.
		AllocaInst *loS = B.CreateAlloca(i32, nullptr, "lo");
		AllocaInst *hiS = B.CreateAlloca(i32, nullptr, "hi");
		AllocaInst *segS = B.CreateAlloca(Type::getInt1Ty(C), nullptr, "second");
		B.CreateStore(B.CreateTrunc(ld(RF_LO), i32), loS);
		B.CreateStore(B.CreateTrunc(ld(RF_HI), i32), hiS);
		B.CreateStore(B.getFalse(), segS);
		Value *lo2 = B.CreateTrunc(ld(RF_LO2), i32);
		Value *hi2 = B.CreateTrunc(ld(RF_HI2), i32);
		Value *region = ld(RF_REGION);
		// The counts and maxima start from nothing and are added to the
		// run's at the end: their values in are then not live across the
		// thread loops (block_reduce: 68.86 M -> 68.62 M instructions,
		// callgrind, `ctasim run block_reduce --arg n=1048576 --threads
		// 1`). The first arrival's barrier and time decide at each
		// arrival, so they start from the run's.
		B.CreateStore(B.getInt64(0), aArr);
		B.CreateStore(B.getInt64(0), aExit);
		B.CreateStore(B.getInt64(0), aBar);
		B.CreateStore(B.getInt64(0), aEnd);
		B.CreateStore(ld(RF_WANT), aWant);
		B.CreateStore(ld(RF_FIRSTVT), aFirst);
		B.CreateStore(ld(RF_LASTVT), aLast);
		std::map<AllocaInst *, Value *> slotBase;
		for (AllocaInst *A : allocas)
			if (kind[A] == 1)
				slotBase[A] =
				    B.CreateGEP(i8, slots, B.CreateMul(n64, B.getInt64(off[A])));
		Value *bx = B.CreateLoad(i32, B.CreateConstInBoundsGEP1_64(i8, gIx, 24));
		Value *by = B.CreateLoad(i32, B.CreateConstInBoundsGEP1_64(i8, gIx, 28));
		Value *bz = B.CreateLoad(i32, B.CreateConstInBoundsGEP1_64(i8, gIx, 32));
		Value *oneRow = B.CreateAnd(B.CreateICmpEQ(by, B.getInt32(1)),
		                            B.CreateICmpEQ(bz, B.getInt32(1)));
		Value *bxy = B.CreateMul(bx, by);
		SwitchInst *sw = B.CreateSwitch(region, done, entryOf.size());
		FunctionCallee mism = M.getOrInsertFunction(
		    "cta__kc_fis_mismatch", Type::getVoidTy(C), ptrT, i64, i64, i64, i64);
		DebugLoc barLoc = bars[0]->getDebugLoc();
		FunctionCallee scanFn =
		    M.getOrInsertFunction("cta__kc_fis_scan", i64, ptrT, i64, i64, i64, i64);

		// The frontier a region's prelude ended at, and the values it left.
		B.SetInsertPoint(sw);
		AllocaInst *frA = B.CreateAlloca(i32, nullptr, "frontier");
		std::map<AllocaInst *, AllocaInst *> snapA;
		for (AllocaInst *A : allocas)
			if (kind[A] == 0 || kind[A] == 2)
				snapA[A] = B.CreateAlloca(A->getAllocatedType(), A->getArraySize(),
				                          "snap");
		std::map<AllocaInst *, Value *> u0;
		for (AllocaInst *A : allocas)
			if (kind[A] == 2)
				u0[A] = B.CreateLoad(A->getAllocatedType(),
				                     B.CreateConstInBoundsGEP1_64(i8, uin, off[A]));
		// Thread t's slot of a variable kept per thread.
		auto slotOf = [&](IRBuilder<> &b, AllocaInst *A, Value *t64) -> Value * {
			return b.CreateGEP(i8, slotBase[A],
			                   b.CreateMul(t64, b.getInt64(eltBytes[A])));
		};
		auto spMax = [&](IRBuilder<> &e, AllocaInst *a, Value *vt) {
			Value *o = e.CreateLoad(i64, a);
			e.CreateStore(e.CreateSelect(e.CreateICmpUGT(vt, o), vt, o), a);
		};
		// A spinning body (spinMode): the engine runs one thread a call
		// (run_spin), so a loop of its own for each region's frontier
		// gains nothing, and each such loop held a copy of all the code
		// its start reaches, which with a region at each yield point
		// (every atomic) is most of the body: ck_work_stealing's 35
		// regions made 120k instructions, and its sanitized object took
		// minutes to compile. Its frontiers share one thread loop and
		// one copy of the body instead: a frontier's entry (a switch on
		// `start`) puts the thread in the lane and restores the region's
		// values as its own loop did, and jumps into the copy at its
		// start; the exits keep the full count of a barrier or an end (as
		// a loop that touches the lane does), at the lane's time where
		// the region touches the lane, else at the run's.
		AllocaInst *spStart = nullptr, *spTouch = nullptr;
		BasicBlock *spH = nullptr;
		PHINode *spT = nullptr;
		SwitchInst *spEnter = nullptr, *spAgain = nullptr;
		Value *spX = nullptr, *spY = nullptr, *spZ = nullptr;
		ValueToValueMapTy spVM;
		unsigned spId = 0;
		if (spinMode) {
			Type *i1 = Type::getInt1Ty(C);
			spStart = B.CreateAlloca(i32, nullptr, "start");
			spTouch = B.CreateAlloca(i1, nullptr, "touch");
			BasicBlock *none = BasicBlock::Create(C, "spin.none", G, done);
			new UnreachableInst(C, none);
			spH = BasicBlock::Create(C, "hdr.spin", G, done);
			BasicBlock *body = BasicBlock::Create(C, "thr.spin", G, done);
			BasicBlock *latch = BasicBlock::Create(C, "next.spin", G, done);
			BasicBlock *runs = BasicBlock::Create(C, "runs.spin", G, done);
			BasicBlock *again = BasicBlock::Create(C, "run2.spin", G, done);
			IRBuilder<> b(spH);
			spT = b.CreatePHI(i32, 2, "t");
			b.CreateCondBr(b.CreateICmpULT(spT, b.CreateLoad(i32, hiS)), body, runs);
			// Where a run of threads ends: on to the second run, if any.
			b.SetInsertPoint(runs);
			b.CreateCondBr(b.CreateAnd(b.CreateNot(b.CreateLoad(i1, segS)),
			                           b.CreateICmpULT(lo2, hi2)),
			               again, done);
			b.SetInsertPoint(again);
			b.CreateStore(b.getTrue(), segS);
			b.CreateStore(lo2, loS);
			b.CreateStore(hi2, hiS);
			spAgain = b.CreateSwitch(b.CreateLoad(i32, spStart), none);
			b.SetInsertPoint(latch);
			spT->addIncoming(b.CreateAdd(spT, b.getInt32(1)), latch);
			markThreadLoop(b.CreateBr(spH));
			b.SetInsertPoint(body);
			// (The 3-D index, which a one-row block's threads get too:
			// their y and z are 0.)
			spX = b.CreateURem(spT, bx);
			spY = b.CreateURem(b.CreateUDiv(spT, bx), by);
			spZ = b.CreateUDiv(spT, bxy);
			b.CreateStore(spX, ixl);
			b.CreateStore(spY, b.CreateConstInBoundsGEP1_64(i8, ixl, 4));
			b.CreateStore(spZ, b.CreateConstInBoundsGEP1_64(i8, ixl, 8));
			Value *t64 = b.CreateZExt(spT, i64);
			spVM[argA] = gArgs;
			spVM[laneA] = gLane;
			spVM[ixA] = ixl;
			std::map<AllocaInst *, Value *> target;
			for (AllocaInst *A : allocas)
				target[A] = kind[A] == 1 ? slotOf(b, A, t64) : (Value *)priv[A];
			for (auto &kv : target)
				spVM[kv.first] = kv.second;
			Value *contAt = b.CreateGEP(i8, cont, t64);
			// The block waits as a whole with its slots packed as runs of
			// equal bytes (run_spin): a thread that stops at barrier j (or
			// ends) leaves zeros in the arrays it reads nothing of after
			// it, not the values its earlier regions left there.
			auto clearDead = [&](IRBuilder<> &e, BasicBlock *at) {
				for (SlotArray &a : slotArrays)
					if (!at || !arrayLive(a, at))
						e.CreateMemSet(
						    e.CreateGEP(
						        i8,
						        e.CreateGEP(
						            i8, slots,
						            e.CreateMul(n64, e.getInt64(a.off))),
						        e.CreateMul(t64, e.getInt64(a.elt))),
						    e.getInt8(0), a.elt, MaybeAlign(a.al));
			};
			spEnter = b.CreateSwitch(b.CreateLoad(i32, spStart), none);
			auto vtime = [&](IRBuilder<> &e) -> Value * {
				Value *lv = e.CreateLoad(
				    i64, e.CreateConstInBoundsGEP1_64(i8, gLane, kLaneVtime));
				return e.CreateSelect(e.CreateLoad(i1, spTouch), lv, T);
			};
			for (unsigned j = 0; j < nb; j++) {
				BasicBlock *X = BasicBlock::Create(
				    C, "bar" + std::to_string(j) + ".spin", G, done);
				spVM[barBB[j]] = X;
				IRBuilder<> e(X);
				clearDead(e, entryOf[j + 1]);
				Value *vt = nullptr;
				if (barKind[j] != 4) {
					vt = vtime(e);
					e.CreateStore(
					    e.CreateAdd(e.CreateLoad(i64, aArr), e.getInt64(1)),
					    aArr);
					spMax(e, aBar, vt);
					e.CreateStore(vt, aLast);
				}
				e.CreateStore(e.getInt8(j), contAt);
				for (AllocaInst *A : allocas)
					if (kind[A] == 2)
						e.CreateStore(
						    e.CreateLoad(A->getAllocatedType(), priv[A]),
						    next[{j, A}]);
				e.CreateStore(e.getTrue(), flag[j]);
				if (barKind[j] == 4) {
					// (A spin, which cta__kc_spin_blocks counted.)
					e.CreateBr(latch);
					continue;
				}
				Value *w = e.CreateLoad(i64, aWant);
				BasicBlock *chk = BasicBlock::Create(C, "chk", G, done);
				BasicBlock *first = BasicBlock::Create(C, "first", G, done);
				BasicBlock *mis = BasicBlock::Create(C, "mis", G, done);
				e.CreateCondBr(e.CreateICmpEQ(w, e.getInt64(j)), latch, chk);
				e.SetInsertPoint(chk);
				e.CreateCondBr(e.CreateICmpEQ(w, e.getInt64(~0ull)), first, mis);
				e.SetInsertPoint(first);
				e.CreateStore(e.getInt64(j), aWant);
				e.CreateStore(vt, aFirst);
				e.CreateBr(latch);
				e.SetInsertPoint(mis);
				CallInst *mc =
				    e.CreateCall(mism, {gRun, t64, e.getInt64(j), vt, w});
				mc->setDebugLoc(barLoc);
				e.CreateBr(latch);
			}
			BasicBlock *XR = BasicBlock::Create(C, "end.spin", G, done);
			{
				IRBuilder<> e(XR);
				clearDead(e, nullptr);
				Value *vt = vtime(e);
				e.CreateStore(e.CreateAdd(e.CreateLoad(i64, aExit), e.getInt64(1)),
				              aExit);
				spMax(e, aEnd, vt);
				e.CreateStore(e.getInt8(0xff), contAt);
				e.CreateBr(latch);
			}
			// The code the frontiers reach, once, in the body's order.
			std::set<BasicBlock *> in;
			for (auto &fr : frontiers)
				for (BasicBlock *s : fr)
					for (BasicBlock *bb : reach(s))
						in.insert(bb);
			std::vector<BasicBlock *> clones;
			for (BasicBlock &bb : F)
				if (in.count(&bb)) {
					BasicBlock *c = CloneBasicBlock(&bb, spVM, ".spin", G);
					c->moveBefore(done);
					spVM[&bb] = c;
					clones.push_back(c);
				}
			SmallVector<Instruction *, 8> deadA;
			for (AllocaInst *A : allocas) {
				Value *c = spVM.lookup(A);
				if (c && c != target[A]) {
					deadA.push_back(cast<Instruction>(c));
					spVM[A] = target[A];
				}
			}
			for (BasicBlock *c : clones)
				for (Instruction &I : *c)
					RemapInstruction(&I, spVM,
					                 RF_NoModuleLevelChanges |
					                     RF_IgnoreMissingLocals);
			for (BasicBlock *c : clones)
				if (auto *R = dyn_cast<ReturnInst>(c->getTerminator())) {
					BranchInst::Create(XR, R);
					R->eraseFromParent();
				}
			for (Instruction *I : deadA)
				I->eraseFromParent();
		}
		for (unsigned r = 0; r < entryOf.size(); r++) {
			BasicBlock *disp =
			    BasicBlock::Create(C, "fis.r" + std::to_string(r), G, done);
			sw->addCase(B.getInt64(r), disp);
			std::string rtag = ".r" + std::to_string(r);
			// The prelude, once: the region's block-uniform start.
			IRBuilder<> o(disp);
			for (AllocaInst *A : allocas)
				if (kind[A] == 2)
					o.CreateStore(u0[A], priv[A]);
			// (The prelude may read rematerialised values too: the
			// index block's own, where the thread is not known.)
			for (AllocaInst *A : allocas)
				if (kind[A] == 3) {
					ValueToValueMapTy rm;
					rm[argA] = gArgs;
					rm[ixA] = ixl;
					rm[laneA] = gLane;
					o.CreateStore(
					    rematEmit(onlyStore(A)->getValueOperand(), o, rm),
					    priv[A]);
				}
			std::vector<BasicBlock *> &fr = frontiers[r];
			BasicBlock *vdisp = BasicBlock::Create(C, "fis.v" + rtag, G, done);
			std::vector<BasicBlock *> fx;
			for (unsigned k = 0; k < fr.size(); k++) {
				BasicBlock *e = BasicBlock::Create(C, "fx" + rtag, G, done);
				IRBuilder<> eb(e);
				eb.CreateStore(eb.getInt32(k), frA);
				for (AllocaInst *A : snap[r])
					eb.CreateStore(
					    eb.CreateLoad(A->getAllocatedType(), priv[A]),
					    snapA[A]);
				eb.CreateBr(vdisp);
				fx.push_back(e);
			}
			if (prelude[r].empty()) {
				o.CreateBr(fx[0]);
			} else {
				ValueToValueMapTy VM;
				VM[argA] = gArgs;
				VM[laneA] = gLane;
				VM[ixA] = ixl;
				for (unsigned k = 0; k < fr.size(); k++)
					VM[fr[k]] = fx[k];
				std::vector<BasicBlock *> clones;
				for (BasicBlock *bb : prelude[r]) {
					BasicBlock *c = CloneBasicBlock(bb, VM, ".once" + rtag, G);
					c->moveBefore(done);
					VM[bb] = c;
					clones.push_back(c);
				}
				SmallVector<Instruction *, 8> deadA;
				for (AllocaInst *A : allocas) {
					Value *c = VM.lookup(A);
					if (c) {
						deadA.push_back(cast<Instruction>(c));
					}
					// (Slots are never touched by a prelude.)
					VM[A] = kind[A] == 1 ? slots : (Value *)priv[A];
				}
				for (BasicBlock *c : clones)
					for (Instruction &I : *c)
						RemapInstruction(&I, VM,
						                 RF_NoModuleLevelChanges |
						                     RF_IgnoreMissingLocals);
				for (Instruction *I : deadA)
					I->eraseFromParent();
				o.CreateBr(cast<BasicBlock>(VM[entryOf[r]]));
			}
			IRBuilder<> vd(vdisp);
			Value *frV = vd.CreateLoad(i32, frA);
			if (spinMode) {
				// The frontiers' entries into the shared loop (above).
				SwitchInst *fsw = vd.CreateSwitch(frV, done, fr.size());
				for (unsigned k = 0; k < fr.size(); k++) {
					ConstantInt *id =
					    ConstantInt::get(Type::getInt32Ty(C), spId++);
					std::string tag = rtag + "f" + std::to_string(k);
					bool touch = touchesLane(reach(fr[k]));
					BasicBlock *pre =
					    BasicBlock::Create(C, "pre" + tag, G, done);
					fsw->addCase(vd.getInt32(k), pre);
					spAgain->addCase(id, pre);
					IRBuilder<> b(pre);
					Value *lo = b.CreateLoad(i32, loS);
					if (publish && !touch)
						nosan(b.CreateStore(T, b.CreateConstInBoundsGEP1_64(
						                           i8, gLane, kLaneVtime)));
					b.CreateStore(id, spStart);
					b.CreateBr(spH);
					spT->addIncoming(lo, pre);
					BasicBlock *en =
					    BasicBlock::Create(C, "thr" + tag, G, done);
					spEnter->addCase(id, en);
					b.SetInsertPoint(en);
					b.CreateStore(b.getInt1(touch), spTouch);
					if (touch || publish) {
						StoreInst *st[4] = {
						    b.CreateStore(spX, gLane),
						    b.CreateStore(spY, b.CreateConstInBoundsGEP1_64(
						                           i8, gLane, 4)),
						    b.CreateStore(spZ, b.CreateConstInBoundsGEP1_64(
						                           i8, gLane, 8)),
						    touch ? b.CreateStore(
						                T, b.CreateConstInBoundsGEP1_64(
						                       i8, gLane, kLaneVtime))
						          : nullptr};
						if (publish)
							for (StoreInst *S : st)
								if (S)
									nosan(S);
					}
					if (publish) {
						// (The compiler barrier between threads, as in
						// the loops below.)
						CallInst *fence =
						    b.CreateCall(M.getOrInsertFunction(
						        "cta__kc_san_fence", Type::getVoidTy(C)));
						fence->setDoesNotThrow();
						fence->addFnAttr(Attribute::WillReturn);
					}
					for (AllocaInst *A : snap[r])
						b.CreateStore(
						    b.CreateLoad(A->getAllocatedType(), snapA[A]),
						    priv[A]);
					for (AllocaInst *A : allocas)
						if (kind[A] == 3) {
							ValueToValueMapTy rm;
							rm[argA] = gArgs;
							rm[ixA] = ixl;
							rm[laneA] = gLane;
							b.CreateStore(
							    rematEmit(
							        onlyStore(A)->getValueOperand(), b,
							        rm),
							    priv[A]);
						}
					b.CreateBr(cast<BasicBlock>(spVM[fr[k]]));
				}
				continue;
			}
			BasicBlock *hdr[2];
			for (int v = 0; v < 2; v++) {
				hdr[v] = BasicBlock::Create(C, "fis.f" + rtag, G, done);
				IRBuilder<> sb(hdr[v]);
				SwitchInst *fsw = sb.CreateSwitch(frV, done, fr.size());
				for (unsigned k = 0; k < fr.size(); k++) {
					BasicBlock *start = fr[k];
					std::vector<BasicBlock *> list = reach(start);
					bool touch = touchesLane(list);
					// The one barrier every thread from this start reaches (no
					// return, no other barrier on any path), or -1.
					int only = -1;
					bool several = false;
					auto note = [&](BasicBlock *s) {
						int j =
						    int(std::find(barBB.begin(), barBB.end(), s) -
						        barBB.begin());
						if (j == int(barBB.size()))
							return;
						several = several || (only >= 0 && only != j);
						only = j;
					};
					note(start);
					bool returns = false;
					for (BasicBlock *lb : list) {
						returns =
						    returns || isa<ReturnInst>(lb->getTerminator());
						for (BasicBlock *s : successors(lb))
							note(s);
					}
					// Every thread from this start ends (no barrier on any
					// path).
					bool endOnly = returns && only < 0 && !several;
					if (several || returns)
						only = -1;
					std::string tag =
					    rtag + "f" + std::to_string(k) + (v ? "g" : "x");
					BasicBlock *pre =
					    BasicBlock::Create(C, "pre" + tag, G, done);
					fsw->addCase(sb.getInt32(k), pre);
					BasicBlock *h = BasicBlock::Create(C, "hdr" + tag, G, done);
					BasicBlock *body =
					    BasicBlock::Create(C, "thr" + tag, G, done);
					BasicBlock *latch =
					    BasicBlock::Create(C, "next" + tag, G, done);
					// A loop whose threads make no call and leave the lane
					// alone (quick) counts its arrivals and checks that they
					// wait at one barrier after the loop: the divergent-barrier
					// reports it may then make are the loop's only ones, so
					// their order is kept (cta__kc_fis_scan).
					bool quick = !touch && nb < 64;
					// A loop whose threads all go to one barrier records it
					// once after the loop (the byte of each thread, the
					// block-uniform values at it), not at each thread's exit:
					// in a quick loop a thread that skips the region's work
					// (the tree loop's tid >= s) then does nothing, and the
					// loop narrows to the threads that do (NarrowPass, below).
					bool hoist = only >= 0 && barKind[only] == 0;
					// Such a loop whose threads make no call also counts its
					// arrivals and checks them against the round's first
					// arrival after the loop: its first thread decides (the
					// others wait where it waits; a divergent-barrier report
					// names the first thread that differs, cta__kc_fis_mismatch
					// ignores the rest), and no other report can come between.
					// No call is then left in it, and its lane stores leave the
					// loop (LaneScopePass).
					bool callfree = true;
					for (BasicBlock *lb : list)
						for (Instruction &I : *lb)
							if (auto *CB = dyn_cast<CallBase>(&I))
								if (!CB->getCalledFunction() ||
								    !CB->getCalledFunction()
								         ->isIntrinsic())
									callfree = false;
					bool defer = hoist && !quick && callfree;
					// The first thread's arrival time.
					AllocaInst *vtF = nullptr;
					if (defer) {
						IRBuilder<> eb(&G->getEntryBlock(),
						               G->getEntryBlock().begin());
						vtF = eb.CreateAlloca(i64, nullptr, "vtfirst");
					}
					// Where a run of threads ends: on to the second run, if any
					// (the prelude's values stand: it ran for the block).
					BasicBlock *fdone =
					    BasicBlock::Create(C, "runs" + tag, G, done);
					{
						BasicBlock *again =
						    BasicBlock::Create(C, "run2" + tag, G, done);
						IRBuilder<> z(fdone);
						Value *more =
						    z.CreateAnd(z.CreateNot(z.CreateLoad(
						                    Type::getInt1Ty(C), segS)),
						                z.CreateICmpULT(lo2, hi2));
						z.CreateCondBr(more, again, done);
						z.SetInsertPoint(again);
						z.CreateStore(z.getTrue(), segS);
						z.CreateStore(lo2, loS);
						z.CreateStore(hi2, hiS);
						z.CreateBr(pre);
					}
					BasicBlock *post =
					    quick || hoist || endOnly
					        ? BasicBlock::Create(C, "post" + tag, G, done)
					        : fdone;
					IRBuilder<> b(pre);
					Value *lo = b.CreateLoad(i32, loS),
					      *hi = b.CreateLoad(i32, hiS);
					if (publish && !touch)
						nosan(b.CreateStore(T, b.CreateConstInBoundsGEP1_64(
						                           i8, gLane, kLaneVtime)));
					Value *e0 = b.CreateLoad(i64, aExit);
					b.CreateStore(b.getInt64(0), aSeen);
					if (defer)
						b.CreateStore(T, vtF);
					b.CreateBr(h);
					b.SetInsertPoint(h);
					PHINode *t = b.CreatePHI(i32, 2, "t");
					t->addIncoming(lo, pre);
					b.CreateCondBr(b.CreateICmpULT(t, hi), body, post);
					// Where a quick loop's count goes on.
					BasicBlock *qtail = post;
					if (quick || hoist || endOnly) {
						IRBuilder<> q(post);
						if (endOnly) {
							// The ends, counted once (as the barrier
							// above).
							BasicBlock *one = BasicBlock::Create(
							    C, "ends" + tag, G, done);
							BasicBlock *rest = BasicBlock::Create(
							    C, "post2" + tag, G, done);
							q.CreateCondBr(q.CreateICmpUGT(hi, lo), one,
							               rest);
							q.SetInsertPoint(one);
							Value *len =
							    q.CreateZExt(q.CreateSub(hi, lo), i64);
							q.CreateMemSet(
							    q.CreateGEP(i8, cont,
							                q.CreateZExt(lo, i64)),
							    q.getInt8(0xff), len, Align(1));
							q.CreateStore(
							    q.CreateAdd(q.CreateLoad(i64, aExit),
							                len),
							    aExit);
							q.CreateBr(rest);
							q.SetInsertPoint(rest);
							qtail = rest;
						}
						if (hoist) {
							BasicBlock *one = BasicBlock::Create(
							    C, "one" + tag, G, done);
							BasicBlock *rest = BasicBlock::Create(
							    C, "post2" + tag, G, done);
							q.CreateCondBr(q.CreateICmpUGT(hi, lo), one,
							               rest);
							q.SetInsertPoint(one);
							q.CreateMemSet(
							    q.CreateGEP(i8, cont,
							                q.CreateZExt(lo, i64)),
							    q.getInt8(only),
							    q.CreateZExt(q.CreateSub(hi, lo), i64),
							    Align(1));
							for (AllocaInst *A : allocas)
								if (kind[A] == 2)
									q.CreateStore(
									    q.CreateLoad(
									        A->getAllocatedType(),
									        priv[A]),
									    next[{unsigned(only),
									          A}]);
							q.CreateStore(q.getTrue(), flag[only]);
							if (quick)
								q.CreateStore(
								    q.CreateOr(
								        q.CreateLoad(i64, aSeen),
								        q.getInt64(1ull << only)),
								    aSeen);
							q.CreateBr(rest);
							q.SetInsertPoint(rest);
							qtail = rest;
						}
						if (defer) {
							// (In the block where hi > lo.)
							IRBuilder<> d(
							    cast<BranchInst>(post->getTerminator())
							        ->getSuccessor(0)
							        ->getTerminator());
							d.CreateStore(
							    d.CreateAdd(
							        d.CreateLoad(i64, aArr),
							        d.CreateZExt(d.CreateSub(hi, lo),
							                     i64)),
							    aArr);
							Value *w = d.CreateLoad(i64, aWant);
							Value *vf = d.CreateLoad(i64, vtF);
							Value *none =
							    d.CreateICmpEQ(w, d.getInt64(~0ull));
							d.CreateStore(
							    d.CreateSelect(
							        none, vf,
							        d.CreateLoad(i64, aFirst)),
							    aFirst);
							d.CreateStore(
							    d.CreateSelect(none, d.getInt64(only),
							                   w),
							    aWant);
							Value *bad = d.CreateAnd(
							    d.CreateNot(none),
							    d.CreateICmpNE(w, d.getInt64(only)));
							Instruction *th = SplitBlockAndInsertIfThen(
							    bad, &*d.GetInsertPoint(), false);
							IRBuilder<> m(th);
							CallInst *mc = m.CreateCall(
							    mism, {gRun, m.CreateZExt(lo, i64),
							           m.getInt64(only), vf, w});
							mc->setDebugLoc(barLoc);
						}
						if (!quick)
							q.CreateBr(fdone);
					}
					if (quick) {
						IRBuilder<> q(qtail);
						Value *nArr = q.CreateSub(
						    q.CreateZExt(q.CreateSub(hi, lo), i64),
						    q.CreateSub(q.CreateLoad(i64, aExit), e0));
						q.CreateStore(
						    q.CreateAdd(q.CreateLoad(i64, aArr), nArr),
						    aArr);
						Value *seen = q.CreateLoad(i64, aSeen);
						BasicBlock *any =
						    BasicBlock::Create(C, "any" + tag, G, done);
						BasicBlock *slow =
						    BasicBlock::Create(C, "scan" + tag, G, done);
						BasicBlock *fin =
						    BasicBlock::Create(C, "fin" + tag, G, done);
						q.CreateCondBr(q.CreateICmpEQ(seen, q.getInt64(0)),
						               fdone, any);
						q.SetInsertPoint(any);
						q.CreateStore(q.getTrue(), aTb);
						q.CreateStore(T, aLast);
						Value *w = q.CreateLoad(i64, aWant);
						Value *none = q.CreateICmpEQ(w, q.getInt64(~0ull));
						q.CreateStore(
						    q.CreateSelect(none, T,
						                   q.CreateLoad(i64, aFirst)),
						    aFirst);
						Value *jj = q.CreateBinaryIntrinsic(
						    Intrinsic::cttz, seen, q.getTrue());
						Value *single = q.CreateICmpEQ(
						    q.CreateAnd(seen,
						                q.CreateSub(seen, q.getInt64(1))),
						    q.getInt64(0));
						Value *okw =
						    q.CreateOr(none, q.CreateICmpEQ(w, jj));
						q.CreateStore(q.CreateSelect(none, jj, w), aWant);
						q.CreateCondBr(q.CreateAnd(single, okw), fin, slow);
						q.SetInsertPoint(slow);
						CallInst *sc = q.CreateCall(
						    scanFn, {gRun, q.CreateZExt(lo, i64),
						             q.CreateZExt(hi, i64), w, T});
						sc->setDebugLoc(barLoc);
						q.CreateStore(sc, aWant);
						q.CreateBr(fin);
						q.SetInsertPoint(fin);
						q.CreateBr(fdone);
					}
					b.SetInsertPoint(latch);
					t->addIncoming(b.CreateAdd(t, b.getInt32(1)), latch);
					markThreadLoop(b.CreateBr(h));
					b.SetInsertPoint(body);
					Value *x, *y, *z;
					if (v == 0) {
						x = t;
						y = z = b.getInt32(0);
					} else {
						x = b.CreateURem(t, bx);
						y = b.CreateURem(b.CreateUDiv(t, bx), by);
						z = b.CreateUDiv(t, bxy);
					}
					b.CreateStore(x, ixl);
					b.CreateStore(y, b.CreateConstInBoundsGEP1_64(i8, ixl, 4));
					b.CreateStore(z, b.CreateConstInBoundsGEP1_64(i8, ixl, 8));
					if (touch) {
						// (In a sanitized copy, published: NarrowPass lets
						// a thread that makes no call skip them.)
						StoreInst *st[4] = {
						    b.CreateStore(x, gLane),
						    b.CreateStore(y, b.CreateConstInBoundsGEP1_64(
						                         i8, gLane, 4)),
						    b.CreateStore(z, b.CreateConstInBoundsGEP1_64(
						                         i8, gLane, 8)),
						    b.CreateStore(T, b.CreateConstInBoundsGEP1_64(
						                         i8, gLane, kLaneVtime))};
						if (publish)
							for (StoreInst *S : st)
								nosan(S);
					} else if (publish) {
						// (A one-row block's y and z stay 0 in the lane.)
						nosan(b.CreateStore(x, gLane));
						if (v) {
							nosan(b.CreateStore(
							    y, b.CreateConstInBoundsGEP1_64(
							           i8, gLane, 4)));
							nosan(b.CreateStore(
							    z, b.CreateConstInBoundsGEP1_64(
							           i8, gLane, 8)));
						}
					}
					if (publish) {
						// A compiler barrier between threads: the
						// kernel-address pass runs after the loop
						// optimisations, and each thread's accesses must
						// reach it as that thread's (not vectorised over
						// threads, nor a store every thread makes sunk out
						// of the loop as one), after its index is in the
						// lane. A call the sanitizer's pass removes once
						// the optimisations are done (san_pass.h): it costs
						// no instruction, and unlike an asm it leaves the
						// argument copy's loads free to leave the loop.
						CallInst *fence =
						    b.CreateCall(M.getOrInsertFunction(
						        "cta__kc_san_fence", Type::getVoidTy(C)));
						fence->setDoesNotThrow();
						fence->addFnAttr(Attribute::WillReturn);
					}
					Value *t64 = b.CreateZExt(t, i64);
					ValueToValueMapTy VM;
					VM[argA] = gArgs;
					VM[laneA] = gLane;
					VM[ixA] = ixl;
					std::map<AllocaInst *, Value *> target;
					for (AllocaInst *A : allocas) {
						if (kind[A] == 1) {
							target[A] = slotOf(b, A, t64);
						} else {
							target[A] = priv[A];
						}
					}
					for (AllocaInst *A : snap[r])
						b.CreateStore(
						    b.CreateLoad(A->getAllocatedType(), snapA[A]),
						    priv[A]);
					for (AllocaInst *A : allocas) {
						if (kind[A] == 3) {
							ValueToValueMapTy rm;
							rm[argA] = gArgs;
							rm[ixA] = ixl;
							rm[laneA] = gLane;
							StoreInst *S = onlyStore(A);
							Value *val =
							    rematEmit(S->getValueOperand(), b, rm);
							b.CreateStore(val, priv[A]);
						}
					}
					for (auto &kv : target)
						VM[kv.first] = kv.second;
					// Exits: to each barrier, and the thread's end.
					Value *vt0 = T;
					auto vtime = [&](IRBuilder<> &e) -> Value * {
						if (!touch)
							return vt0;
						return e.CreateLoad(
						    i64, e.CreateConstInBoundsGEP1_64(i8, gLane,
						                                      kLaneVtime));
					};
					auto maxInto = [&](IRBuilder<> &e, AllocaInst *a,
					                   Value *vt) {
						Value *o = e.CreateLoad(i64, a);
						e.CreateStore(
						    e.CreateSelect(e.CreateICmpUGT(vt, o), vt, o),
						    a);
					};
					Value *contAt = b.CreateGEP(i8, cont, t64);
					for (unsigned j = 0; j < nb; j++) {
						BasicBlock *X = BasicBlock::Create(
						    C, "bar" + std::to_string(j) + tag, G, done);
						VM[barBB[j]] = X;
						IRBuilder<> e(X);
						if (barKind[j] == 2 || barKind[j] == 4) {
							// An mbarrier wait (cta__kc_wait_blocks) or
							// a spin (cta__kc_spin_blocks), which
							// counted the thread: no barrier
							// bookkeeping.
							e.CreateStore(e.getInt8(j), contAt);
							for (AllocaInst *A : allocas)
								if (kind[A] == 2)
									e.CreateStore(
									    e.CreateLoad(
									        A->getAllocatedType(),
									        priv[A]),
									    next[{j, A}]);
							e.CreateStore(e.getTrue(), flag[j]);
							e.CreateBr(latch);
							continue;
						}
						if (hoist && quick) {
							e.CreateBr(
							    latch); // (recorded after the loop)
							continue;
						}
						if (quick) {
							e.CreateStore(e.getInt8(j), contAt);
							for (AllocaInst *A : allocas)
								if (kind[A] == 2)
									e.CreateStore(
									    e.CreateLoad(
									        A->getAllocatedType(),
									        priv[A]),
									    next[{j, A}]);
							e.CreateStore(e.getTrue(), flag[j]);
							e.CreateStore(
							    e.CreateOr(e.CreateLoad(i64, aSeen),
							               e.getInt64(1ull << j)),
							    aSeen);
							e.CreateBr(latch);
							continue;
						}
						Value *vt = vtime(e);
						if (defer) {
							// (Counted and checked after the loop.)
							maxInto(e, aBar, vt);
							e.CreateStore(vt, aLast);
							Value *isFirst = e.CreateICmpEQ(t, lo);
							cast<Instruction>(isFirst)->setMetadata(
							    "ctasim.first", MDNode::get(C, {}));
							e.CreateStore(
							    e.CreateSelect(isFirst, vt,
							                   e.CreateLoad(i64, vtF)),
							    vtF);
							e.CreateBr(latch);
							continue;
						}
						e.CreateStore(e.CreateAdd(e.CreateLoad(i64, aArr),
						                          e.getInt64(1)),
						              aArr);
						// (A loop that does not touch the lane leaves every
						// thread at T: one max at the end, no chain per
						// thread.)
						if (touch)
							maxInto(e, aBar, vt);
						else
							e.CreateStore(e.getTrue(), aTb);
						e.CreateStore(vt, aLast);
						if (!hoist) {
							e.CreateStore(e.getInt8(j), contAt);
							for (AllocaInst *A : allocas)
								if (kind[A] == 2)
									e.CreateStore(
									    e.CreateLoad(
									        A->getAllocatedType(),
									        priv[A]),
									    next[{j, A}]);
							e.CreateStore(e.getTrue(), flag[j]);
						}
						Value *w = e.CreateLoad(i64, aWant);
						BasicBlock *chk =
						    BasicBlock::Create(C, "chk", G, done);
						BasicBlock *first =
						    BasicBlock::Create(C, "first", G, done);
						BasicBlock *mis =
						    BasicBlock::Create(C, "mis", G, done);
						e.CreateCondBr(e.CreateICmpEQ(w, e.getInt64(j)),
						               latch, chk);
						e.SetInsertPoint(chk);
						e.CreateCondBr(e.CreateICmpEQ(w, e.getInt64(~0ull)),
						               first, mis);
						e.SetInsertPoint(first);
						e.CreateStore(e.getInt64(j), aWant);
						e.CreateStore(vt, aFirst);
						e.CreateBr(latch);
						e.SetInsertPoint(mis);
						CallInst *mc = e.CreateCall(
						    mism, {gRun, t64, e.getInt64(j), vt, w});
						mc->setDebugLoc(barLoc);
						e.CreateBr(latch);
					}
					BasicBlock *XR =
					    BasicBlock::Create(C, "end" + tag, G, done);
					{
						IRBuilder<> e(XR);
						Value *vt = vtime(e);
						if (!endOnly)
							e.CreateStore(
							    e.CreateAdd(e.CreateLoad(i64, aExit),
							                e.getInt64(1)),
							    aExit);
						if (touch)
							maxInto(e, aEnd, vt);
						else
							e.CreateStore(e.getTrue(), aTe);
						if (!endOnly)
							e.CreateStore(e.getInt8(0xff), contAt);
						e.CreateBr(latch);
					}
					// The region's code, cloned into the loop.
					std::vector<BasicBlock *> clones;
					for (BasicBlock *bb : list) {
						BasicBlock *c = CloneBasicBlock(bb, VM, tag, G);
						c->moveBefore(done);
						VM[bb] = c;
						clones.push_back(c);
					}
					// CloneBasicBlock mapped the body's allocas to their
					// clones: map them to their places, and drop the clones.
					SmallVector<Instruction *, 8> deadA;
					for (AllocaInst *A : allocas) {
						Value *c = VM.lookup(A);
						if (c && c != target[A]) {
							deadA.push_back(cast<Instruction>(c));
							VM[A] = target[A];
						}
					}
					for (BasicBlock *c : clones)
						for (Instruction &I : *c)
							RemapInstruction(
							    &I, VM,
							    RF_NoModuleLevelChanges |
							        RF_IgnoreMissingLocals);
					for (BasicBlock *c : clones) {
						SmallVector<Instruction *, 4> rm;
						for (Instruction &I : *c) {
							if (isa<ReturnInst>(I)) {
								rm.push_back(&I);
							}
						}
						for (Instruction *I : rm) {
							if (isa<ReturnInst>(I)) {
								BranchInst::Create(XR, I);
							}
							I->eraseFromParent();
						}
					}
					for (Instruction *I : deadA)
						I->eraseFromParent();
					b.CreateBr(cast<BasicBlock>(VM[start]));
				}
			}
			vd.CreateCondBr(oneRow, hdr[0], hdr[1]);
		}
		B.SetInsertPoint(done);
		auto st = [&](unsigned f, AllocaInst *a) {
			B.CreateStore(B.CreateLoad(i64, a), field(B, f));
		};
		auto add = [&](unsigned f, AllocaInst *a) {
			B.CreateStore(
			    B.CreateAdd(B.CreateLoad(i64, field(B, f)), B.CreateLoad(i64, a)),
			    field(B, f));
		};
		auto umax = [&](unsigned f, AllocaInst *a) {
			Value *cur = B.CreateLoad(i64, field(B, f)), *v = B.CreateLoad(i64, a);
			B.CreateStore(B.CreateSelect(B.CreateICmpUGT(v, cur), v, cur), field(B, f));
		};
		add(RF_ARRIVED, aArr);
		add(RF_EXITED, aExit);
		umax(RF_BARMAX, aBar);
		umax(RF_ENDMAX, aEnd);
		st(RF_WANT, aWant);
		st(RF_FIRSTVT, aFirst);
		st(RF_LASTVT, aLast);
		for (auto [flagA, f] : {std::pair{aTb, RF_BARMAX}, std::pair{aTe, RF_ENDMAX}}) {
			Value *cur = B.CreateLoad(i64, field(B, f));
			Value *m = B.CreateSelect(B.CreateICmpUGT(T, cur), T, cur);
			B.CreateStore(
			    B.CreateSelect(B.CreateLoad(Type::getInt1Ty(C), flagA), m, cur),
			    field(B, f));
		}
		for (unsigned j = 0; j < nb; j++) {
			bool any = false;
			for (AllocaInst *A : allocas)
				any = any || kind[A] == 2;
			if (!any)
				break;
			BasicBlock *w = BasicBlock::Create(C, "wout", G);
			BasicBlock *k = BasicBlock::Create(C, "wnext", G);
			B.CreateCondBr(B.CreateLoad(Type::getInt1Ty(C), flag[j]), w, k);
			IRBuilder<> e(w);
			for (AllocaInst *A : allocas)
				if (kind[A] == 2)
					e.CreateStore(
					    e.CreateLoad(A->getAllocatedType(), next[{j, A}]),
					    e.CreateConstInBoundsGEP1_64(
					        i8, uout, (uint64_t)j * uniBytes + off[A]));
			e.CreateBr(k);
			B.SetInsertPoint(k);
		}
		B.CreateRetVoid();
		return G;
	}
};

struct RegionsPass : PassInfoMixin<RegionsPass> {
	PreservedAnalyses run(Module &M, ModuleAnalysisManager &MAM)
	{
		auto &FAM = MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
		const bool verbose = std::getenv("CTA_KC_VERBOSE") != nullptr;
		// No loop-strength reduction in the code generator: in a thread
		// loop it turns the thread index and each address derived from it
		// into induction variables of their own (block_reduce's first
		// region: i, &in[i] and the rank, each stepped per thread), and
		// the loop, which also keeps its clock, its end-time maximum and
		// the grid stride in registers, spills; with none, the addresses
		// are indexed loads from the rank (27 -> 21 instructions a thread,
		// block_reduce__kc_fis 46.5 M -> 39.0 M, callgrind, `ctasim run
		// block_reduce --arg n=1048576 --threads 1`; the sanitized
		// copies' loops too, once their tests are placed and LICM ran
		// again, san_pass.h). As `-mllvm -disable-lsr` would, for this
		// translation unit: the code generator reads it after this
		// pipeline.
		if (cl::Option *o = cl::getRegisteredOptions().lookup("disable-lsr"))
			o->addOccurrence(0, "disable-lsr", "true");
		SmallVector<Function *, 16> bodies;
		for (Function &F : M)
			if (!F.isDeclaration() && F.getName().endswith(kSuffix))
				bodies.push_back(&F);
		bool changed = false;
		for (Function *F : bodies) {
			std::string base = F->getName().str();
			base.resize(base.size() - std::string(kSuffix).size());
			GlobalVariable *D = M.getNamedGlobal(base + "__kc");
			if (!D || !D->hasInitializer() ||
			    !isa<ConstantStruct>(D->getInitializer())) {
				errs()
				    << "ctasim-kc: " << base
				    << ": no descriptor (compile through compiler/kc_kernel.h)\n";
				continue;
			}
			inlineBarrierHelpers(*F);
			FAM.invalidate(*F, PreservedAnalyses::none());
			Checker ck;
			std::string why = ck.check(*F, true, FAM);
			bool grid = why.find("grid waits") != std::string::npos;
			for (Instruction &I : instructions(*F))
				if (auto *CB = dyn_cast<CallBase>(&I))
					if (Function *c = CB->getCalledFunction())
						grid = grid || c->getName() == "cta__kc_grid_check";
			if (grid) {
				// Perhaps in a branch its inlined helpers' arguments rule
				// out (ck_graph_global_barrier's ck_graph_app(p, 0): a
				// grid barrier's inline form, kc_kernel.h, or a call of
				// cta__grid_sync; only then: the other bodies' code stays
				// as it was).
				foldConstants(*F);
				FAM.invalidate(*F, PreservedAnalyses::none());
				ck = Checker();
				why = ck.check(*F, true, FAM);
			}
			SmallVector<CallInst *, 8> bars;
			for (Instruction &I : instructions(*F))
				if (auto *CI = dyn_cast<CallInst>(&I))
					if (Function *c = CI->getCalledFunction())
						if (c->getName() == kBarrier)
							bars.push_back(CI);
			std::string waits;
			std::string pwaits;
			const unsigned noWait = neverWaits(*F, waits)          ? 2
			                        : neverWaits(*F, pwaits, true) ? 4
			                                                       : 0;
			if (verbose)
				errs() << "ctasim-kc: " << base << ": "
				       << (noWait == 2   ? "never waits"
				           : noWait == 4 ? "never waits but may poll"
				                         : "may wait (" + waits + ")")
				       << "\n";
			std::string shares;
			const unsigned noShared = neverShared(*F, shares) ? 16 : 0;
			if (verbose)
				errs() << "ctasim-kc: " << base << ": "
				       << (noShared ? "never reaches shared memory"
				                    : "may reach shared memory (" + shares + ")")
				       << "\n";
			setDescField(
			    D, 11,
			    ConstantInt::get(Type::getInt32Ty(M.getContext()), noWait | noShared));
			if (M.getNamedGlobal("cta__kc_analysed_only")) {
				// Only the descriptor, for its flags: the body runs as
				// the gcc objects have it (compiler/meson.build).
				setDescField(D, 1,
				             ConstantPointerNull::get(
				                 PointerType::getUnqual(M.getContext())));
				setDescField(D, 2,
				             IRBuilder<>(M.getContext())
				                 .CreateGlobalStringPtr(
				                     "analysed only: left to the gcc objects",
				                     base + "__kc_why", 0, &M));
				// (The sanitizer's probe, KC_PROBE, keeps the body, which
				// it inlines: san_probe.h.)
				F->removeDeadConstantUsers();
				if (F->use_empty())
					F->eraseFromParent();
				changed = true;
				continue;
			}
			bool steals = false, cluster = false;
			for (Instruction &I : instructions(*F))
				if (auto *CI = dyn_cast<CallInst>(&I))
					if (Function *c = CI->getCalledFunction()) {
						steals = steals || isWorkSteal(c->getName()) ||
						         c->getName() == kWait;
						cluster = cluster || c->getName() == kCluster;
					}
			if (why.empty() && bars.empty() && !steals && !cluster)
				why = "no __syncthreads: the plain thread loop is already a loop";
			changed = true;
			if (!why.empty()) {
				if (verbose)
					errs()
					    << "ctasim-kc: " << base << ": fibers: " << why << "\n";
				setDescField(
				    D, 2,
				    IRBuilder<>(M.getContext())
				        .CreateGlobalStringPtr(why, base + "__kc_why", 0, &M));
				continue;
			}
			LLVMContext &Cx = M.getContext();
			Constant *nullp = ConstantPointerNull::get(PointerType::getUnqual(Cx));
			setDescField(D, 2, nullp);
			// The loop form first; the coroutine form where it cannot.
			Fission fz(*F);
			fz.spinMode = ck.spins;
			std::string fwhy = fz.prepare();
			if (fwhy.empty())
				fwhy = fz.classify();
			if (fwhy.empty())
				fz.findPreludes();
			Function *G = nullptr;
			Fission::SmemFacts smem;
			if (fwhy.empty()) {
				smem = fz.smemFacts();
				if (verbose) {
					for (auto &c : smem.cover)
						errs() << "ctasim-kc: " << base
						       << ": the first region writes "
						       << c.site->getName() << " whole (" << c.size
						       << " bytes a thread)\n";
					for (auto &c : smem.write)
						errs() << "ctasim-kc: " << base << ": writes "
						       << c.site->getName() << " by rank only ("
						       << c.size << " bytes a thread)\n";
				}
				G = fz.build(base);
				if (std::getenv("CTA_KC_DUMP") &&
				    base == std::getenv("CTA_KC_DUMP"))
					G->print(errs());
				if (verifyFunction(*G, &errs())) {
					if (std::getenv("CTA_KC_DUMP"))
						G->print(errs());
					G->eraseFromParent();
					G = nullptr;
					fwhy =
					    "the loop form did not verify (a kernel compiler bug)";
				}
			}
			if (G) {
				Type *i32 = Type::getInt32Ty(Cx);
				StructType *BT =
				    StructType::get(Cx, {PointerType::getUnqual(Cx), i32, i32});
				std::vector<Constant *> rows;
				for (size_t j = 0; j < fz.bars.size(); j++) {
					Value *file = fz.bars[j]->getArgOperand(0),
					      *line = fz.bars[j]->getArgOperand(1);
					if (!isa<Constant>(file) || !isa<ConstantInt>(line)) {
						file = nullp; // (a yield point's: see prepare)
						line = ConstantInt::get(i32, 0);
					}
					rows.push_back(ConstantStruct::get(
					    BT, {cast<Constant>(file), cast<Constant>(line),
					         ConstantInt::get(i32, fz.barKind[j])}));
				}
				auto *AT = ArrayType::get(BT, rows.size());
				auto *tab = new GlobalVariable(
				    M, AT, true, GlobalValue::PrivateLinkage,
				    ConstantArray::get(AT, rows), base + "__kc_bars");
				setDescField(D, 1, nullp);
				setDescField(D, 4, G);
				setDescField(D, 5, nullp);
				setDescField(D, 6, tab);
				setDescField(D, 8, ConstantInt::get(i32, fz.slotBytes));
				setDescField(D, 9, ConstantInt::get(i32, fz.uniBytes));
				setDescField(D, 10, ConstantInt::get(i32, rows.size()));
				// CTA__KC_LOCAL_SMEM (sim/exec/regions.h): only calls that
				// keep no shared-memory address past the block.
				bool local = true;
				for (Instruction &I : instructions(*F))
					if (auto *CB = dyn_cast<CallBase>(&I)) {
						Function *c = CB->getCalledFunction();
						if (CB->isInlineAsm() || (c && c->isIntrinsic()))
							continue;
						StringRef n = c ? c->getName() : "";
						local = local &&
						        (n == "cta__shared" ||
						         n == "cta__shared_dynamic" ||
						         n == "cta__spin_poll" ||
						         n == "cta__poll_thread" || n == kBarrier);
					}
				// CTA__KC_OBS: more than one mbarrier wait, so a thread's
				// observation of one must outlive the others' threads.
				const unsigned obs = fz.waitAt.size() > 1 ? 8 : 0;
				// CTA__KC_CLUSTER: a cluster barrier, which the engine's
				// rounds of one CTA cannot take (run_cluster instead).
				// CTA__KC_SPIN: yield points that end a spinning thread's
				// region (run_spin).
				// (A spinning thread in that form suspends at its yield
				// points: not CTA__KC_POLLS_ONLY.)
				setDescField(D, 11,
				             ConstantInt::get(
				                 i32, (local ? 1 : 0) |
				                          (fz.spinMode ? noWait & ~4u : noWait) |
				                          noShared | obs | (cluster ? 32 : 0) |
				                          (fz.spinMode ? 64 : 0)));
				if (local) {
					Type *i64 = Type::getInt64Ty(Cx);
					StructType *CT =
					    StructType::get(Cx, {PointerType::getUnqual(Cx), i64});
					unsigned idx = 12;
					for (auto *list : {&smem.cover, &smem.write}) {
						std::vector<Constant *> cv;
						for (auto &c : *list)
							cv.push_back(ConstantStruct::get(
							    CT, {c.site,
							         ConstantInt::get(i64, c.size)}));
						if (!cv.empty()) {
							auto *CA = ArrayType::get(CT, cv.size());
							setDescField(
							    D, idx,
							    new GlobalVariable(
							        M, CA, true,
							        GlobalValue::PrivateLinkage,
							        ConstantArray::get(CA, cv),
							        base + (idx == 12 ? "__kc_cover"
							                          : "__kc_write")));
							setDescField(
							    D, idx + 2,
							    ConstantInt::get(i32, cv.size()));
						}
						idx++;
					}
				}
				F->replaceAllUsesWith(UndefValue::get(F->getType()));
				F->eraseFromParent();
				if (verbose)
					errs() << "ctasim-kc: " << base << ": loops ("
					       << rows.size() << " barrier(s), " << fz.slotBytes
					       << " bytes of slots per thread, " << fz.uniBytes
					       << " of block-uniform values)\n";
				continue;
			}
			if (steals || cluster || ck.spins) {
				// The coroutine form has no work-stealing loop of its own,
				// nor cluster barriers, nor spinning threads.
				why = std::string(cluster  ? "a cluster barrier"
				                  : steals ? "a work-stealing loop or mbarrier wait"
				                           : "a loop that spins on memory") +
				      " the loop form cannot take: " + fwhy;
				if (verbose)
					errs()
					    << "ctasim-kc: " << base << ": fibers: " << why << "\n";
				setDescField(D, 2,
				             IRBuilder<>(Cx).CreateGlobalStringPtr(
				                 why, base + "__kc_why", 0, &M));
				continue;
			}
			bars = fz.bars.empty() ? bars : fz.bars;
			Function *R = toRegions(*F, bars);
			F->replaceAllUsesWith(R);
			F->eraseFromParent();
			setDescField(
			    D, 5,
			    IRBuilder<>(Cx).CreateGlobalStringPtr(fwhy, base + "__kc_fwhy", 0, &M));
			if (verbose)
				errs() << "ctasim-kc: " << base << ": regions (" << bars.size()
				       << " barrier(s); not loops: " << fwhy << ")\n";
		}
		return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
	}
	static bool isRequired()
	{
		return true;
	}
};

// Tells the optimiser that the lane (the loop form's second argument, or the
// thread-local cta__cur that kernel.h's helpers read, the same lane) is
// memory of its own: the body's other accesses (its arguments, shared and
// global memory, the loop form's slots and locals) are never to it. Then a
// thread loop that makes no call keeps the lane's thread index and virtual
// time in registers and stores them once after the loop (LICM's promotion),
// where it stored them for every thread, and cta_spin_ns's clock is a
// register. Calls carry no scope: whatever they read of the lane, the loop
// stores before them. Run once the loop form's variables are registers
// (the first peephole point, after SROA); not on --sanitize's copies, whose
// checks read the lane per thread.
struct LaneScopePass : PassInfoMixin<LaneScopePass> {
	// 1: the lane, 0: memory that is not the lane, -1: unknown.
	static int laneBase(const Value *p, const Argument *lane)
	{
		SmallVector<const Value *, 4> objs;
		getUnderlyingObjects(p, objs, nullptr, 12);
		int r = -2;
		for (const Value *o : objs) {
			int k;
			if (o == lane)
				k = 1;
			else if (auto *L = dyn_cast<LoadInst>(o))
				k = isTlsLane(L->getPointerOperand()) ? 1 : 0;
			else if (isa<Argument>(o) || isa<AllocaInst>(o) || isa<CallBase>(o) ||
			         isa<GlobalVariable>(o)) // (cta__cur's slot is not the lane)
				k = 0;
			else
				k = -1;
			if (r == -2)
				r = k;
			else if (r != k)
				r = -1;
		}
		return r == -2 ? -1 : r;
	}
	// The address of cta__cur (the thread-local lane pointer).
	static bool isTlsLane(const Value *p)
	{
		if (auto *II = dyn_cast<IntrinsicInst>(p))
			if (II->getIntrinsicID() == Intrinsic::threadlocal_address)
				p = II->getArgOperand(0);
		auto *G = dyn_cast<GlobalVariable>(p->stripPointerCasts());
		return G && G->getName() == "cta__cur";
	}

	// The lane pointers of F (the argument, loads of cta__cur) go only into
	// addresses of loads and stores: never stored, passed or compared, so
	// that no other pointer can be the lane.
	static bool laneStaysPut(Function &F)
	{
		SmallVector<const Value *, 16> work{F.getArg(1)};
		for (Instruction &I : instructions(F))
			if (auto *L = dyn_cast<LoadInst>(&I))
				if (isTlsLane(L->getPointerOperand()))
					work.push_back(L);
		std::set<const Value *> seen;
		while (!work.empty()) {
			const Value *v = work.pop_back_val();
			if (!seen.insert(v).second)
				continue;
			for (const User *U : v->users()) {
				if (auto *L = dyn_cast<LoadInst>(U)) {
					if (L->getPointerOperand() != v)
						return false;
				} else if (auto *S = dyn_cast<StoreInst>(U)) {
					if (S->getPointerOperand() != v ||
					    S->getValueOperand() == v)
						return false;
				} else if (isa<GetElementPtrInst>(U) || isa<BitCastInst>(U) ||
				           isa<PHINode>(U) || isa<SelectInst>(U)) {
					work.push_back(U);
				} else {
					return false;
				}
			}
		}
		return true;
	}

	// Keeps the lane's thread index and clock (the fields the loop form
	// writes for each thread, and cta_spin_ns's clock) in locals that
	// become registers: the lane gets them where a call may read them
	// (stored before each call, read again after it) and at the return.
	// A thread loop with a call on one path (thread 0's atomicAdd) so no
	// longer stores the index and clock of every thread.
	static bool mirror(Function &F, const Argument *lane)
	{
		const DataLayout &DL = F.getParent()->getDataLayout();
		LLVMContext &C = F.getContext();
		static const unsigned offs[4] = {0, 4, 8, 64};
		struct Acc {
			Instruction *I;
			int f;
		};
		SmallVector<Acc, 32> accs;
		SmallVector<Instruction *, 16> syncs;
		SmallVector<ReturnInst *, 4> rets;
		for (Instruction &I : instructions(F)) {
			if (auto *R = dyn_cast<ReturnInst>(&I)) {
				rets.push_back(R);
				continue;
			}
			if (auto *MI = dyn_cast<MemIntrinsic>(&I)) {
				if (laneBase(MI->getDest(), lane) != 0)
					return false;
				if (auto *MT = dyn_cast<MemTransferInst>(MI))
					if (laneBase(MT->getSource(), lane) != 0)
						return false;
				continue;
			}
			if (auto *CB = dyn_cast<CallBase>(&I)) {
				if (isa<InvokeInst>(CB) || isa<CallBrInst>(CB))
					return false;
				auto *II = dyn_cast<IntrinsicInst>(CB);
				if (!II || II->mayWriteToMemory() || II->mayReadFromMemory())
					if (!II || !(isa<DbgInfoIntrinsic>(II) ||
					             II->isLifetimeStartOrEnd() ||
					             II->getIntrinsicID() ==
					                 Intrinsic::threadlocal_address))
						syncs.push_back(CB);
				continue;
			}
			Value *p = nullptr;
			Type *ty = nullptr;
			if (auto *L = dyn_cast<LoadInst>(&I)) {
				p = L->getPointerOperand();
				ty = L->getType();
			} else if (auto *S = dyn_cast<StoreInst>(&I)) {
				p = S->getPointerOperand();
				ty = S->getValueOperand()->getType();
			} else if (auto *RMW = dyn_cast<AtomicRMWInst>(&I)) {
				if (laneBase(RMW->getPointerOperand(), lane) != 0)
					return false;
				continue;
			} else if (auto *CX = dyn_cast<AtomicCmpXchgInst>(&I)) {
				if (laneBase(CX->getPointerOperand(), lane) != 0)
					return false;
				continue;
			} else if (isa<FenceInst>(I)) {
				continue; // (the lane is this host thread's alone)
			} else if (I.mayReadOrWriteMemory()) {
				return false;
			}
			if (!p)
				continue;
			int k = laneBase(p, lane);
			if (k == 0)
				continue;
			if (k < 0)
				return false;
			int64_t off = 0;
			Value *b = GetPointerBaseWithConstantOffset(p, off, DL);
			auto *bl = dyn_cast<LoadInst>(b);
			if (b != lane && !(bl && isTlsLane(bl->getPointerOperand())))
				return false;
			int64_t size = (int64_t)DL.getTypeStoreSize(ty);
			bool overlaps =
			    (off < 12 && off + size > 0) || (off < 72 && off + size > 64);
			if (!overlaps)
				continue;
			int f = -1;
			for (int i = 0; i < 4; i++)
				if (off == offs[i])
					f = i;
			bool simple = isa<LoadInst>(I) ? cast<LoadInst>(I).isSimple()
			                               : cast<StoreInst>(I).isSimple();
			if (f < 0 || !simple || !ty->isIntegerTy(f == 3 ? 64 : 32))
				return false;
			accs.push_back({&I, f});
		}
		if (accs.empty())
			return false;
		BasicBlock &E = F.getEntryBlock();
		IRBuilder<> b(&E, E.getFirstInsertionPt());
		Type *i8 = Type::getInt8Ty(C);
		Type *tys[4] = {Type::getInt32Ty(C), Type::getInt32Ty(C), Type::getInt32Ty(C),
		                Type::getInt64Ty(C)};
		AllocaInst *loc[4];
		Value *lp = const_cast<Argument *>(lane);
		for (int i = 0; i < 4; i++)
			loc[i] = b.CreateAlloca(tys[i], nullptr, "lane.mirror");
		auto fieldPtr = [&](IRBuilder<> &bb, int i) {
			return bb.CreateConstInBoundsGEP1_64(i8, lp, offs[i]);
		};
		for (int i = 0; i < 4; i++)
			b.CreateStore(b.CreateLoad(tys[i], fieldPtr(b, i)), loc[i]);
		auto out = [&](Instruction *at) {
			IRBuilder<> o(at);
			for (int i = 0; i < 4; i++)
				o.CreateStore(o.CreateLoad(tys[i], loc[i]), fieldPtr(o, i));
		};
		for (Instruction *cI : syncs) {
			out(cI);
			IRBuilder<> a(cI->getNextNode());
			for (int i = 0; i < 4; i++)
				a.CreateStore(a.CreateLoad(tys[i], fieldPtr(a, i)), loc[i]);
		}
		for (ReturnInst *R : rets)
			out(R);
		for (Acc &a : accs) {
			if (auto *L = dyn_cast<LoadInst>(a.I)) {
				L->setOperand(0, loc[a.f]);
			} else {
				cast<StoreInst>(a.I)->setOperand(1, loc[a.f]);
			}
			a.I->setMetadata(LLVMContext::MD_tbaa, nullptr);
			a.I->setMetadata(LLVMContext::MD_alias_scope, nullptr);
			a.I->setMetadata(LLVMContext::MD_noalias, nullptr);
		}
		DominatorTree DT(F);
		PromoteMemToReg(SmallVector<AllocaInst *, 4>(loc, loc + 4), DT);
		return true;
	}

	PreservedAnalyses run(Function &F, FunctionAnalysisManager &)
	{
		if (!F.getName().endswith("__kc_fis") || F.hasFnAttribute("ctasim-lane-scope") ||
		    F.getParent()->getNamedGlobal("cta__kc_sanitized"))
			return PreservedAnalyses::all();
		F.addFnAttr("ctasim-lane-scope");
		if (!laneStaysPut(F))
			return PreservedAnalyses::all();
		bool mirrored = mirror(F, F.getArg(1));
		LLVMContext &C = F.getContext();
		MDBuilder MDB(C);
		MDNode *dom = MDB.createAnonymousAliasScopeDomain("ctasim.lane");
		MDNode *scope = MDB.createAnonymousAliasScope(dom, "lane");
		MDNode *list = MDNode::get(C, {scope});
		const Argument *lane = F.getArg(1);
		for (Instruction &I : instructions(F)) {
			Value *p = nullptr;
			if (auto *L = dyn_cast<LoadInst>(&I))
				p = L->getPointerOperand();
			else if (auto *S = dyn_cast<StoreInst>(&I))
				p = S->getPointerOperand();
			if (!p)
				continue;
			int k = laneBase(p, lane);
			if (k == 1)
				I.setMetadata(LLVMContext::MD_alias_scope, list);
			else if (k == 0)
				I.setMetadata(LLVMContext::MD_noalias, list);
		}
		(void)mirrored;
		PreservedAnalyses pa;
		pa.preserveSet<CFGAnalyses>();
		return pa;
	}
	static bool isRequired()
	{
		return true;
	}
};

// Narrows a loop form's thread loop to the threads that do anything: a loop
// t = lo .. hi-1 whose header tests t < U or t == U (U the same for every
// thread: the tree loop's `tid < s`, the tail's `tid == 0`) and whose other
// threads go straight to the next thread, writing no memory, runs over
// [lo, min(hi, U)) or [U, U + 1) only. What a skipped thread leaves in the
// values carried from thread to thread or used after the loop (its index,
// a value the same for every thread, the end time's maximum with one) is
// put back where the skipped threads would have left it, so the loop's
// results and the lane's index and clock at its end are those of the whole
// range. Run on the NAME__kc_fis
// functions once the loop optimisations gave the thread loop its final form
// (a rotated loop: t starts at lo, the latch leaves when t + 1 == hi), before
// the vectoriser, which then sees the narrowed loop. LLVM's LoopBoundSplit
// does not take these loops (its split condition must be the latch's form).
struct NarrowPass : PassInfoMixin<NarrowPass> {
	// V is the induction variable P, or P zero-extended.
	static bool isIV(Value *V, PHINode *P)
	{
		if (V == P)
			return true;
		auto *Z = dyn_cast<ZExtInst>(V);
		return Z && Z->getOperand(0) == P;
	}

	// What a skipped thread leaves in a value of the loop (evaluated along
	// the header's edge to the latch): the same as header phi q, a value
	// the same for every thread (c), the thread's index, or umax(q, c).
	enum SkipKind { SK_SAME, SK_CONST, SK_IV, SK_UMAX, SK_BAD };
	struct Skip {
		SkipKind k = SK_BAD;
		PHINode *q = nullptr;
		Value *c = nullptr;
	};
	static Skip skipOf(Value *V, Loop *L, PHINode *P, BasicBlock *H, BasicBlock *Lt,
	                   int depth = 0)
	{
		Skip r;
		if (depth > 4)
			return r;
		if (L->isLoopInvariant(V)) {
			r.k = SK_CONST;
			r.c = V;
			return r;
		}
		auto *I = dyn_cast<Instruction>(V);
		if (V == P) {
			r.k = SK_IV;
			return r;
		}
		if (auto *Q = dyn_cast<PHINode>(V)) {
			if (Q->getParent() == H) {
				r.k = SK_SAME;
				r.q = Q;
				return r;
			}
			if (Q->getParent() == Lt && Q->getBasicBlockIndex(H) >= 0)
				return skipOf(Q->getIncomingValueForBlock(H), L, P, H, Lt,
				              depth + 1);
			return r;
		}
		if (auto *II = dyn_cast_or_null<IntrinsicInst>(I))
			if (II->getIntrinsicID() == Intrinsic::umax && II->getParent() == Lt) {
				Skip x = skipOf(II->getArgOperand(0), L, P, H, Lt, depth + 1);
				Skip y = skipOf(II->getArgOperand(1), L, P, H, Lt, depth + 1);
				if (x.k == SK_CONST)
					std::swap(x, y);
				if (x.k == SK_SAME && y.k == SK_CONST) {
					r.k = SK_UMAX;
					r.q = x.q;
					r.c = y.c;
				}
			}
		return r;
	}

	static bool narrow(Loop *L, LoopInfo &LI)
	{
		// (The loop's one predecessor, a preheader or not: the new bounds
		// are computed before its branch.)
		BasicBlock *H = L->getHeader(), *Pre = L->getLoopPredecessor(),
		           *Lt = L->getLoopLatch();
		BasicBlock *E = L->getExitBlock();
		if (!Pre || !Lt || H == Lt || L->getExitingBlock() != Lt || !E)
			return false;
		// The thread index: the header phi that steps by one.
		PHINode *P = nullptr;
		for (PHINode &ph : H->phis()) {
			auto *nx = dyn_cast<BinaryOperator>(ph.getIncomingValueForBlock(Lt));
			if (ph.getType()->isIntegerTy() && nx &&
			    nx->getOpcode() == Instruction::Add && nx->getOperand(0) == &ph &&
			    match1(nx->getOperand(1))) {
				if (P)
					return false;
				P = &ph;
			}
		}
		if (!P || P->getNumIncomingValues() != 2)
			return false;
		Value *start = P->getIncomingValueForBlock(Pre);
		auto *next = cast<BinaryOperator>(P->getIncomingValueForBlock(Lt));
		// The latch: leaves when next == hi (or next >= hi).
		auto *LB = dyn_cast<BranchInst>(Lt->getTerminator());
		if (!LB || !LB->isConditional())
			return false;
		auto *LC = dyn_cast<ICmpInst>(LB->getCondition());
		// (or trunc(next) == hi: the widened index of a sanitized copy,
		// whose lane takes the thread as 32 bits)
		auto *LT = LC ? dyn_cast<TruncInst>(LC->getOperand(0)) : nullptr;
		if (!LC || (LC->getOperand(0) != next && !(LT && LT->getOperand(0) == next)) ||
		    !L->isLoopInvariant(LC->getOperand(1)))
			return false;
		bool exitTrue = !L->contains(LB->getSuccessor(0));
		ICmpInst::Predicate lp = LC->getPredicate();
		if (!((exitTrue && (lp == ICmpInst::ICMP_EQ || lp == ICmpInst::ICMP_UGE)) ||
		      (!exitTrue && (lp == ICmpInst::ICMP_NE || lp == ICmpInst::ICMP_ULT))))
			return false;
		// The header: t < U (or t == U) to the thread's work, else to the
		// latch.
		auto *HB = dyn_cast<BranchInst>(H->getTerminator());
		if (!HB || !HB->isConditional())
			return false;
		auto *HC = dyn_cast<ICmpInst>(HB->getCondition());
		if (!HC)
			return false;
		Value *a = HC->getOperand(0), *u = HC->getOperand(1);
		ICmpInst::Predicate hp = HC->getPredicate();
		if (!isIV(a, P)) {
			std::swap(a, u);
			hp = ICmpInst::getSwappedPredicate(hp);
		}
		if (!isIV(a, P) || !L->isLoopInvariant(u))
			return false;
		BasicBlock *skip;
		bool eq = false;
		if (hp == ICmpInst::ICMP_ULT || hp == ICmpInst::ICMP_EQ) {
			skip = HB->getSuccessor(1);
			eq = hp == ICmpInst::ICMP_EQ;
		} else if (hp == ICmpInst::ICMP_UGE || hp == ICmpInst::ICMP_NE) {
			skip = HB->getSuccessor(0);
			eq = hp == ICmpInst::ICMP_NE;
		} else {
			return false;
		}
		if (skip != Lt)
			return false;
		forwardPublished(H, Lt);
		// A skipped thread runs the header and the latch: nothing there may
		// write memory or call (but for what a sanitized copy publishes of
		// each thread, which a thread that makes no access never needs).
		for (BasicBlock *bb : {H, Lt})
			for (Instruction &I : *bb)
				if ((I.mayHaveSideEffects() ||
				     (isa<CallBase>(I) && !isa<IntrinsicInst>(I))) &&
				    !published(I))
					return false;
		// What the skipped threads leave in the values carried from thread
		// to thread, and in those used after the loop: kept exact.
		std::map<PHINode *, Skip> carried;
		for (PHINode &ph : H->phis()) {
			if (&ph == P)
				continue;
			Skip k = skipOf(ph.getIncomingValueForBlock(Lt), L, P, H, Lt);
			if (k.k == SK_BAD || (k.k == SK_SAME && k.q != &ph) ||
			    (k.k == SK_UMAX && k.q != &ph) ||
			    (k.k == SK_IV && ph.getType() != P->getType()))
				return false;
			carried[&ph] = k;
		}
		SmallVector<std::pair<PHINode *, Skip>, 8> outs; // exit phis to mend
		SmallVector<Value *, 8> outv;                    // ... and their values
		for (BasicBlock *bb : L->blocks())
			for (Instruction &I : *bb)
				for (User *Us : I.users()) {
					auto *UI = cast<Instruction>(Us);
					if (L->contains(UI->getParent()))
						continue;
					auto *X = dyn_cast<PHINode>(UI);
					if (!X || X->getParent() != E || I.getParent() != Lt)
						return false;
					Skip k = skipOf(&I, L, P, H, Lt);
					if (k.k == SK_BAD ||
					    (k.k == SK_IV && I.getType() != P->getType()))
						return false;
					if (k.k == SK_SAME) {
						// Only a carried value's next, left alone by a
						// skip.
						auto it = carried.find(k.q);
						if (it == carried.end() ||
						    it->second.k != SK_SAME ||
						    k.q->getIncomingValueForBlock(Lt) != &I)
							return false;
						continue;
					}
					if (k.k == SK_UMAX &&
					    k.q->getIncomingValueForBlock(Lt) != &I)
						return false;
					outs.push_back({X, k});
					outv.push_back(&I);
				}
		// New bounds: ult: [lo, max(min(hi, U), lo + 1)); eq: [U, U + 1)
		// when lo <= U < hi, else [lo, lo + 1) (the loop runs at least
		// once; that thread is then skipped as before).
		IRBuilder<> b(Pre->getTerminator());
		Type *T = P->getType();
		Value *hi = LC->getOperand(1);
		if (hi->getType() != T)
			hi = b.CreateZExt(hi, T);
		Value *one = ConstantInt::get(T, 1);
		Value *uT, *inR = nullptr;
		if (u->getType() == T) {
			uT = u;
			inR = b.CreateAnd(b.CreateICmpUGE(u, start), b.CreateICmpULT(u, hi));
		} else if (u->getType()->getIntegerBitWidth() > T->getIntegerBitWidth()) {
			Value *hw = b.CreateZExt(hi, u->getType());
			uT = b.CreateTrunc(b.CreateBinaryIntrinsic(Intrinsic::umin, u, hw), T);
			inR = b.CreateAnd(b.CreateICmpUGE(u, b.CreateZExt(start, u->getType())),
			                  b.CreateICmpULT(u, hw));
		} else {
			uT = b.CreateZExt(u, T);
			inR = b.CreateAnd(b.CreateICmpUGE(uT, start), b.CreateICmpULT(uT, hi));
		}
		Value *nStart = start, *nEnd;
		Value *skHead = b.getFalse();
		if (eq) {
			nStart = b.CreateSelect(inR, uT, start);
			nEnd = b.CreateSelect(inR, b.CreateAdd(uT, one), b.CreateAdd(start, one));
			skHead = b.CreateAnd(inR, b.CreateICmpUGT(uT, start));
		} else {
			nEnd = b.CreateBinaryIntrinsic(Intrinsic::umin, hi, uT);
			nEnd =
			    b.CreateBinaryIntrinsic(Intrinsic::umax, nEnd, b.CreateAdd(start, one));
		}
		Value *skTail = b.CreateICmpNE(nEnd, hi);
		// Threads skipped before the first that works (eq): their effect
		// on the carried values, from the start.
		for (auto &[Q, k] : carried) {
			Value *init = Q->getIncomingValueForBlock(Pre);
			Value *after = nullptr;
			if (k.k == SK_CONST)
				after = k.c;
			else if (k.k == SK_IV)
				after = b.CreateSub(nStart, one);
			else if (k.k == SK_UMAX)
				after = b.CreateBinaryIntrinsic(Intrinsic::umax, init, k.c);
			if (after)
				Q->setIncomingValueForBlock(Pre,
				                            b.CreateSelect(skHead, after, init));
		}
		P->setIncomingValueForBlock(Pre, nStart);
		LC->setOperand(1, nEnd->getType() == LC->getOperand(0)->getType()
		                      ? nEnd
		                      : b.CreateTrunc(nEnd, LC->getOperand(0)->getType()));
		// Threads skipped after the last that works: what the last of them
		// leaves in the values used after the loop, on the loop's exit edge
		// (its own block: the exit block may have other predecessors).
		if (!outs.empty()) {
			BasicBlock *N =
			    BasicBlock::Create(H->getContext(), "narrow.exit", H->getParent(), E);
			BranchInst::Create(E, N);
			if (Loop *PL = L->getParentLoop())
				PL->addBasicBlockToLoop(N, LI);
			LB->replaceSuccessorWith(E, N);
			for (PHINode &X : E->phis())
				X.replaceIncomingBlockWith(Lt, N);
			IRBuilder<> e(N->getTerminator());
			for (size_t i = 0; i < outs.size(); i++) {
				auto &[X, k] = outs[i];
				Value *in = outv[i], *v;
				if (k.k == SK_CONST)
					v = k.c;
				else if (k.k == SK_IV)
					v = e.CreateSub(hi, one);
				else
					v = e.CreateBinaryIntrinsic(Intrinsic::umax, in, k.c);
				X->setIncomingValueForBlock(N, e.CreateSelect(skTail, v, in));
			}
		}
		return true;
	}

	// In a sanitized copy the header publishes the thread's clock in the
	// lane (Fission's publish), and the latch, where a thread that ends
	// joins it, reads it back for the end-time maximum: the load keeps
	// the loop from narrowing (block_reduce's tid == 0 tail ran all 256
	// threads). On the header's edge the latch reads what the header
	// stored: a phi of that value and the load on every other edge.
	static void forwardPublished(BasicBlock *H, BasicBlock *Lt)
	{
		if (!is_contained(predecessors(Lt), H))
			return;
		for (Instruction &I : make_early_inc_range(*Lt)) {
			if (I.mayWriteToMemory())
				break;
			auto *Ld = dyn_cast<LoadInst>(&I);
			if (!Ld || !Ld->isSimple())
				continue;
			Value *ptr = Ld->getPointerOperand();
			if (auto *PI = dyn_cast<Instruction>(ptr))
				if (PI->getParent() == Lt)
					continue;
			StoreInst *S = nullptr;
			bool bad = false;
			for (Instruction &J : *H) {
				if (!J.mayWriteToMemory())
					continue;
				if (!published(J)) {
					bad = true;
					break;
				}
				auto *St = dyn_cast<StoreInst>(&J);
				if (St && St->getPointerOperand() == ptr)
					S = St;
			}
			if (bad || !S || S->getValueOperand()->getType() != Ld->getType())
				continue;
			PHINode *phi =
			    PHINode::Create(Ld->getType(), 0, "published", &*Lt->begin());
			std::map<BasicBlock *, Value *> at;
			for (BasicBlock *Pd : predecessors(Lt)) {
				Value *&v = at[Pd];
				if (!v) {
					if (Pd == H) {
						v = S->getValueOperand();
					} else {
						auto *c = cast<LoadInst>(Ld->clone());
						c->insertBefore(Pd->getTerminator());
						v = c;
					}
				}
				phi->addIncoming(v, Pd);
			}
			Ld->replaceAllUsesWith(phi);
			Ld->eraseFromParent();
		}
	}

	// The sanitized copy's store of the running thread in the lane, and
	// the fence after it (Fission's publish).
	static bool published(Instruction &I)
	{
		if (isa<StoreInst>(I))
			return I.getMetadata(LLVMContext::MD_nosanitize) != nullptr;
		auto *CB = dyn_cast<CallBase>(&I);
		Function *f = CB ? CB->getCalledFunction() : nullptr;
		return f && f->getName() == "cta__kc_san_fence";
	}

	static bool match1(Value *V)
	{
		auto *c = dyn_cast<ConstantInt>(V);
		return c && c->isOne();
	}

	PreservedAnalyses run(Function &F, FunctionAnalysisManager &FAM)
	{
		if (!F.getName().endswith("__kc_fis"))
			return PreservedAnalyses::all();
		auto &LI = FAM.getResult<LoopAnalysis>(F);
		bool changed = false;
		for (Loop *L : LI.getLoopsInPreorder())
			if (L->isInnermost()) {
				// (The values used after the loop as phis of its exit
				// block: a sanitized copy's loops reach here without.)
				DominatorTree DT(F);
				changed |= formLCSSA(*L, DT, &LI, nullptr);
				changed |= narrow(L, LI);
			}
		return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
	}
	static bool isRequired()
	{
		return true;
	}
};

// A thread loop whose threads each test guards of the form t < X or
// t + A < B (X, A, B the same for every thread; the tree loop's tid < s and
// tid + s < bsize) and skip to the next thread when one fails, carrying no
// value from thread to thread: the threads that pass them all are
// [lo, min(hi, X, B - A)), which a copy of the loop without the guards runs
// (the vectoriser then takes the tree's adds); the loop as it was runs where
// t + A could wrap, or where no thread passes. Run after NarrowPass.
struct GuardFreePass : PassInfoMixin<GuardFreePass> {
	struct Guard {
		Value *x = nullptr, *a = nullptr; // t < x, or t + a < x
		BinaryOperator *add = nullptr;
	};
	// V is the thread index P, or P truncated or widened.
	static bool isT(Value *V, PHINode *P)
	{
		if (V == P)
			return true;
		if (auto *C = dyn_cast<CastInst>(V))
			return C->getOperand(0) == P && (isa<TruncInst>(C) || isa<ZExtInst>(C));
		return false;
	}
	static bool guardOf(ICmpInst *C, PHINode *P, Loop *L, Guard &g)
	{
		Value *l = C->getOperand(0), *r = C->getOperand(1);
		ICmpInst::Predicate pr = C->getPredicate();
		if (pr == ICmpInst::ICMP_UGT) {
			std::swap(l, r);
			pr = ICmpInst::ICMP_ULT;
		}
		if (pr != ICmpInst::ICMP_ULT || !L->isLoopInvariant(r))
			return false;
		g.x = r;
		if (isT(l, P))
			return true;
		auto *B = dyn_cast<BinaryOperator>(l);
		if (!B || B->getOpcode() != Instruction::Add)
			return false;
		for (unsigned k = 0; k < 2; k++)
			if (isT(B->getOperand(k), P) && L->isLoopInvariant(B->getOperand(1 - k))) {
				g.a = B->getOperand(1 - k);
				g.add = B;
				return true;
			}
		return false;
	}
	static bool run1(Loop *L)
	{
		BasicBlock *H = L->getHeader(), *Pre = L->getLoopPreheader(),
		           *Lt = L->getLoopLatch();
		BasicBlock *E = L->getExitBlock();
		if (!Pre || !Lt || !E || H == Lt || L->getExitingBlock() != Lt ||
		    !Lt->phis().empty())
			return false;
		PHINode *P = nullptr;
		for (PHINode &ph : H->phis()) {
			if (P)
				return false; // (a value carried from thread to thread)
			P = &ph;
		}
		if (!P || P->getNumIncomingValues() != 2 || !P->getType()->isIntegerTy() ||
		    P->getType()->getIntegerBitWidth() > 64)
			return false;
		auto *next = dyn_cast<BinaryOperator>(P->getIncomingValueForBlock(Lt));
		auto *one = next ? dyn_cast<ConstantInt>(next->getOperand(1)) : nullptr;
		if (!next || next->getOpcode() != Instruction::Add || next->getOperand(0) != P ||
		    !one || !one->isOne())
			return false;
		auto *LB = dyn_cast<BranchInst>(Lt->getTerminator());
		auto *LC =
		    LB && LB->isConditional() ? dyn_cast<ICmpInst>(LB->getCondition()) : nullptr;
		if (!LC || LC->getOperand(0) != next || !L->isLoopInvariant(LC->getOperand(1)) ||
		    LC->getOperand(1)->getType() != P->getType())
			return false;
		bool exitTrue = !L->contains(LB->getSuccessor(0));
		if (!((exitTrue && LC->getPredicate() == ICmpInst::ICMP_EQ) ||
		      (!exitTrue && LC->getPredicate() == ICmpInst::ICMP_NE)))
			return false;
		// The guards, from the header on: each skips to the latch.
		SmallVector<std::pair<BranchInst *, Guard>, 4> guards;
		SmallPtrSet<BasicBlock *, 8> gb;
		BasicBlock *b = H;
		while (b != Lt && guards.size() < 4) {
			auto *BR = dyn_cast<BranchInst>(b->getTerminator());
			if (!BR || !BR->isConditional() || BR->getSuccessor(1) != Lt)
				break;
			auto *C = dyn_cast<ICmpInst>(BR->getCondition());
			Guard g;
			if (!C || !guardOf(C, P, L, g))
				break;
			for (Instruction &I : *b)
				if (I.mayHaveSideEffects())
					return false;
			guards.push_back({BR, g});
			gb.insert(b);
			b = BR->getSuccessor(0);
			if (b != Lt && b->getSinglePredecessor() != BR->getParent())
				return false;
		}
		if (guards.empty())
			return false;
		// No value of the loop is used after it.
		for (BasicBlock *bb : L->blocks())
			for (Instruction &I : *bb)
				for (User *U : I.users())
					if (!L->contains(cast<Instruction>(U)->getParent()))
						return false;
		// The new end, and whether each guard is t < bound exactly over the
		// loop's threads (t + a stays below 2^width, and t too where the
		// guard reads it narrowed, up to the old end: the threads the copy
		// leaves out must fail one), all in 64 bits.
		IRBuilder<> pb(Pre->getTerminator());
		Type *i64 = Type::getInt64Ty(H->getContext()), *TT = P->getType();
		unsigned wp = TT->getIntegerBitWidth();
		auto wide = [&](Value *v) {
			return v->getType()->getIntegerBitWidth() < 64 ? pb.CreateZExt(v, i64) : v;
		};
		Value *start = wide(P->getIncomingValueForBlock(Pre)),
		      *end = wide(LC->getOperand(1));
		Value *ne = end, *ok = pb.getTrue();
		for (auto &[BR, g] : guards) {
			unsigned w = g.x->getType()->getIntegerBitWidth();
			if (w > 64)
				return false;
			Value *bound = g.x;
			if (g.a) {
				Value *fits = pb.CreateICmpUGT(g.x, g.a);
				bound = pb.CreateSelect(fits, pb.CreateSub(g.x, g.a),
				                        ConstantInt::get(g.x->getType(), 0));
			}
			ne = pb.CreateBinaryIntrinsic(Intrinsic::umin, ne, wide(bound));
			Value *lim = w < 64 ? ConstantInt::get(i64, 1ull << w) : nullptr;
			if (g.a && lim)
				ok = pb.CreateAnd(
				    ok, pb.CreateICmpULE(pb.CreateAdd(wide(g.a), end), lim));
			else if (g.a)
				ok = pb.CreateAnd(
				    ok, pb.CreateICmpULE(
				            end, pb.CreateSub(ConstantInt::get(i64, ~0ull), g.a)));
			else if (lim && w < wp)
				ok = pb.CreateAnd(ok, pb.CreateICmpULE(end, lim));
		}
		ok = pb.CreateAnd(ok, pb.CreateICmpUGT(ne, start));
		Value *neT = wp < 64 ? pb.CreateTrunc(ne, TT) : ne;
		// The copy: the loop's blocks, its guards always true.
		ValueToValueMapTy vm;
		SmallVector<BasicBlock *, 8> copies;
		Function *Fn = H->getParent();
		for (BasicBlock *bb : L->blocks()) {
			BasicBlock *c = CloneBasicBlock(bb, vm, ".gf", Fn);
			vm[bb] = c;
			copies.push_back(c);
		}
		for (BasicBlock *c : copies)
			for (Instruction &I : *c)
				RemapInstruction(&I, vm,
				                 RF_NoModuleLevelChanges | RF_IgnoreMissingLocals);
		auto *P2 = cast<PHINode>(vm[P]);
		P2->setIncomingBlock(P2->getBasicBlockIndex(Pre), Pre);
		for (auto &[BR, g] : guards) {
			auto *br2 = cast<BranchInst>(vm[BR]);
			br2->setCondition(ConstantInt::getTrue(Fn->getContext()));
			if (g.add)
				if (auto *add2 = dyn_cast<BinaryOperator>(vm[g.add]))
					add2->setHasNoUnsignedWrap(true);
		}
		cast<ICmpInst>(vm[LC])->setOperand(1, neT);
		BasicBlock *Lt2 = cast<BasicBlock>(vm[Lt]);
		// (The copy's own loop metadata: not the loop's, which it copied.
		// Asked to vectorise, the tree's loop took more instructions with
		// SSE2's two lanes than without.)
		if (MDNode *old = Lt->getTerminator()->getMetadata(LLVMContext::MD_loop)) {
			SmallVector<Metadata *, 4> ops{nullptr};
			for (unsigned i = 1; i < old->getNumOperands(); i++)
				ops.push_back(old->getOperand(i));
			MDNode *md = MDNode::getDistinct(H->getContext(), ops);
			md->replaceOperandWith(0, md);
			Lt2->getTerminator()->setMetadata(LLVMContext::MD_loop, md);
		}
		for (PHINode &X : E->phis())
			X.addIncoming(X.getIncomingValueForBlock(Lt), Lt2);
		auto *PT = cast<BranchInst>(Pre->getTerminator());
		BranchInst::Create(cast<BasicBlock>(vm[H]), H, ok, PT);
		PT->eraseFromParent();
		return true;
	}
	PreservedAnalyses run(Function &F, FunctionAnalysisManager &FAM)
	{
		if (!F.getName().endswith("__kc_fis"))
			return PreservedAnalyses::all();
		auto &LI = FAM.getResult<LoopAnalysis>(F);
		auto &DT = FAM.getResult<DominatorTreeAnalysis>(F);
		auto &AC = FAM.getResult<AssumptionAnalysis>(F);
		SmallVector<Loop *, 8> inner;
		for (Loop *L : LI.getLoopsInPreorder())
			if (L->isInnermost())
				inner.push_back(L);
		bool changed = false;
		// (Preheaders and dedicated exits first: the copy's and the
		// loop's guard goes before the one, both leave to the other.)
		for (Loop *L : inner)
			changed |= simplifyLoop(L, &DT, &LI, nullptr, &AC, nullptr, false);
		for (Loop *L : inner) {
			changed |= run1(L);
		}
		return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
	}
	static bool isRequired()
	{
		return true;
	}
};

// Peels a thread loop's first thread where the loop keeps that thread's
// arrival time (Fission's deferred loops: `t == lo`, marked ctasim.first):
// the other threads then carry no compare and no select, and the loop two
// registers fewer (block_reduce's first region had spilled its bounds).
// LLVM peels such compares only off innermost loops, and a thread loop
// holds the body's own. Run after NarrowPass, before the vectoriser.
struct PeelFirstPass : PassInfoMixin<PeelFirstPass> {
	PreservedAnalyses run(Function &F, FunctionAnalysisManager &FAM)
	{
		if (!F.getName().endswith("__kc_fis"))
			return PreservedAnalyses::all();
		bool changed = false;
		for (int round = 0; round < 16; round++) {
			auto &LI = FAM.getResult<LoopAnalysis>(F);
			auto &DT = FAM.getResult<DominatorTreeAnalysis>(F);
			auto &SE = FAM.getResult<ScalarEvolutionAnalysis>(F);
			auto &AC = FAM.getResult<AssumptionAnalysis>(F);
			ICmpInst *cmp = nullptr;
			Loop *L = nullptr;
			for (Instruction &I : instructions(F)) {
				auto *c = dyn_cast<ICmpInst>(&I);
				if (!c || !c->getMetadata("ctasim.first") ||
				    c->getPredicate() != ICmpInst::ICMP_EQ)
					continue;
				c->setMetadata("ctasim.first", nullptr);
				// t == start, t the header phi of a loop stepping by one.
				for (unsigned k = 0; k < 2 && !L; k++) {
					auto *P = dyn_cast<PHINode>(c->getOperand(k));
					Loop *PL = P ? LI.getLoopFor(P->getParent()) : nullptr;
					if (!PL || PL->getHeader() != P->getParent() ||
					    !PL->getLoopPredecessor() || !PL->getLoopLatch() ||
					    P->getNumIncomingValues() != 2)
						continue;
					auto *nx = dyn_cast<BinaryOperator>(
					    P->getIncomingValueForBlock(PL->getLoopLatch()));
					auto *one =
					    nx ? dyn_cast<ConstantInt>(nx->getOperand(1)) : nullptr;
					if (!nx || nx->getOpcode() != Instruction::Add ||
					    nx->getOperand(0) != P || !one || !one->isOne() ||
					    P->getIncomingValueForBlock(PL->getLoopPredecessor()) !=
					        c->getOperand(1 - k))
						continue;
					// (No wrap: the loop leaves at an invariant bound
					// before the index comes back to its start.)
					auto *LB = dyn_cast<BranchInst>(
					    PL->getLoopLatch()->getTerminator());
					auto *LC = LB && LB->isConditional()
					               ? dyn_cast<ICmpInst>(LB->getCondition())
					               : nullptr;
					if (!LC || LC->getOperand(0) != nx ||
					    !PL->isLoopInvariant(LC->getOperand(1)) ||
					    PL->getExitingBlock() != PL->getLoopLatch())
						continue;
					L = PL;
					cmp = c;
				}
				if (L)
					break;
			}
			if (!L)
				break;
			simplifyLoop(L, &DT, &LI, &SE, &AC, nullptr, false);
			formLCSSARecursively(*L, DT, &LI, &SE);
			if (!canPeel(L))
				continue;
			ValueToValueMapTy vm;
			if (!peelLoop(L, 1, &LI, &SE, DT, &AC, true, vm))
				continue;
			// The loop's other threads come after its first.
			cmp->replaceAllUsesWith(ConstantInt::getFalse(F.getContext()));
			cmp->eraseFromParent();
			changed = true;
			FAM.invalidate(F, PreservedAnalyses::none());
		}
		return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
	}
	static bool isRequired()
	{
		return true;
	}
};

// Moves each thread loop of a loop form that holds a loop of the body's
// (block_reduce's first region: the grid-stride loop in each thread) into a
// function of its own, called once per run of threads. In the function that
// holds every region, the values live around the thread loop (the lane's
// mirrored index and clock, the run's bounds and counts, the second run's
// flag) kept registers that the thread loop then lacked, and the register
// allocator spilled values the loop reads for every thread (the end-time
// maximum and the shared array's address: three loads and a store a thread);
// alone, the loop has the registers to itself. Thread loops without a loop
// inside (the tree steps, a handful of threads after NarrowPass) stay where
// they are: a call would cost more than they do; so do loops that call out.
// Run last, on code the optimiser is done with; not on --sanitize's copies
// (san_pass.h reads their loops in place).
struct OutlinePass : PassInfoMixin<OutlinePass> {
	// No calls but intrinsics: a loop that calls out (the CLC bodies' waits)
	// saves its registers around each call anyway, and may run one thread a
	// call (a block woken from an mbarrier wait).
	static bool callFree(const Loop *L)
	{
		for (BasicBlock *bb : L->blocks())
			for (Instruction &I : *bb)
				if (auto *CB = dyn_cast<CallBase>(&I))
					if (!CB->getCalledFunction() ||
					    !CB->getCalledFunction()->isIntrinsic())
						return false;
		return true;
	}
	static bool isThread(const Loop *L)
	{
		MDNode *id = L->getLoopID();
		if (!id)
			return false;
		for (unsigned i = 1; i < id->getNumOperands(); i++)
			if (auto *p = dyn_cast<MDNode>(id->getOperand(i)))
				if (p->getNumOperands() == 1)
					if (auto *s = dyn_cast<MDString>(p->getOperand(0)))
						if (s->getString() == kThreadLoop)
							return true;
		return false;
	}
	PreservedAnalyses run(Module &M, ModuleAnalysisManager &)
	{
		if (M.getNamedGlobal("cta__kc_sanitized") || std::getenv("CTA_KC_NO_OUTLINE"))
			return PreservedAnalyses::all();
		SmallVector<Function *, 8> fns;
		for (Function &F : M)
			if (!F.isDeclaration() && F.getName().endswith("__kc_fis"))
				fns.push_back(&F);
		bool changed = false;
		for (Function *F : fns) {
			std::set<BasicBlock *> tried;
			for (int round = 0; round < 64; round++) {
				DominatorTree DT(*F);
				LoopInfo LI(DT);
				Loop *pick = nullptr;
				for (Loop *L : LI.getLoopsInPreorder())
					if (isThread(L) && !L->isInnermost() && callFree(L) &&
					    !tried.count(L->getHeader())) {
						pick = L;
						break;
					}
				if (!pick)
					break;
				tried.insert(pick->getHeader());
				// With its exits, which hold the loop's results as phis (LCSSA):
				// the new function stores them once, at its end, where with
				// the loop alone it stored them after each thread.
				formLCSSARecursively(*pick, DT, &LI, nullptr);
				formDedicatedExitBlocks(pick, &DT, &LI, nullptr, true);
				SmallVector<BasicBlock *, 16> region(pick->blocks());
				SmallVector<BasicBlock *, 4> exits;
				pick->getUniqueExitBlocks(exits);
				bool dedicated = true;
				for (BasicBlock *E : exits)
					for (BasicBlock *P : predecessors(E))
						dedicated = dedicated && pick->contains(P);
				if (!dedicated)
					continue;
				region.append(exits.begin(), exits.end());
				CodeExtractor CE(region, &DT, false, nullptr, nullptr, nullptr,
				                 false, false, nullptr, "thr");
				if (!CE.isEligible())
					continue;
				CodeExtractorAnalysisCache CEAC(*F);
				if (Function *X = CE.extractCodeRegion(CEAC)) {
					X->addFnAttr(Attribute::NoInline);
					changed = true;
					if (std::getenv("CTA_KC_VERBOSE"))
						errs() << "ctasim-kc: " << F->getName()
						       << ": a thread loop with a loop inside as "
						       << X->getName() << "\n";
				}
			}
		}
		return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
	}
	static bool isRequired()
	{
		return true;
	}
};

// A thread loop holding a loop of the body's that each thread of the run
// enters once and leaves after one trip: the grid-stride loop
// `for (i = base + t; i < n; i += stride)` where the grid covers the data
// (block_reduce's first region). Its threads' starts S(t) step by one or
// not at all with the thread, so a test before the loop decides for the
// whole run: S(hi - 1) < n (every thread enters, where the loop is
// guarded by S(t) < n) and S(lo) + stride >= n without wrapping (no
// thread goes round), compared as the loop compares (unsigned or signed).
// Where it holds, a copy of the thread loop with that loop's guard and back
// edge gone runs instead: the thread loop is then innermost, and the
// vectoriser takes it; a maximum the threads fold a value every thread
// computes alike into (each thread's end time, the region's clock plus the
// same cost) is taken once before the copy. The loop as it was runs where
// the test fails. Run after GuardFreePass; not on --sanitize's copies
// (san_pass.h reads their loops in place).
struct OneTripPass : PassInfoMixin<OneTripPass> {
	static bool isThread(const Loop *L)
	{
		MDNode *id = L->getLoopID();
		if (!id)
			return false;
		for (unsigned i = 1; i < id->getNumOperands(); i++)
			if (auto *p = dyn_cast<MDNode>(id->getOperand(i)))
				if (p->getNumOperands() == 1)
					if (auto *s = dyn_cast<MDString>(p->getOperand(0)))
						if (s->getString() == kThreadLoop)
							return true;
		return false;
	}
	// The continue condition of a branch as l < r, the way `into` goes:
	// false when it is not of that form; sgn, whether signed.
	static bool lt(BranchInst *BR, BasicBlock *into, Value *&l, Value *&r, bool &sgn)
	{
		if (!BR || !BR->isConditional())
			return false;
		auto *C = dyn_cast<ICmpInst>(BR->getCondition());
		if (!C || (BR->getSuccessor(0) == into) == (BR->getSuccessor(1) == into))
			return false;
		ICmpInst::Predicate pr =
		    BR->getSuccessor(0) == into ? C->getPredicate() : C->getInversePredicate();
		l = C->getOperand(0);
		r = C->getOperand(1);
		if (pr == ICmpInst::ICMP_UGT || pr == ICmpInst::ICMP_SGT) {
			std::swap(l, r);
			pr = ICmpInst::getSwappedPredicate(pr);
		}
		sgn = pr == ICmpInst::ICMP_SLT;
		return pr == ICmpInst::ICMP_ULT || pr == ICmpInst::ICMP_SLT;
	}
	// Moves I (and what it reads inside the copy) before IP, where that is
	// safe: pure arithmetic of values from outside.
	static bool hoist(Value *V, const SmallPtrSetImpl<BasicBlock *> &in, Instruction *IP,
	                  int depth = 0)
	{
		auto *I = dyn_cast<Instruction>(V);
		if (!I || !in.count(I->getParent()))
			return true;
		if (depth > 8 || isa<PHINode>(I) || I->mayReadOrWriteMemory() ||
		    !isSafeToSpeculativelyExecute(I))
			return false;
		for (Value *o : I->operands())
			if (!hoist(o, in, IP, depth + 1))
				return false;
		I->moveBefore(IP);
		return true;
	}
	static bool run1(Loop *TL, DominatorTree &DT, LoopInfo &LI, ScalarEvolution &SE,
	                 const DataLayout &DL)
	{
		if (TL->getSubLoops().size() != 1)
			return false;
		Loop *IL = TL->getSubLoops()[0];
		BasicBlock *Pre = TL->getLoopPreheader(), *Lt = TL->getLoopLatch(),
		           *H = TL->getHeader(), *E = TL->getExitBlock();
		if (!IL->isInnermost() || !Pre || !Lt || !E || TL->getExitingBlock() != Lt)
			return false;
		for (BasicBlock *p : predecessors(E))
			if (!TL->contains(p))
				return false;
		BasicBlock *IH = IL->getHeader(), *IPre = IL->getLoopPreheader(),
		           *ILt = IL->getLoopLatch(), *IE = IL->getExitBlock();
		if (!IPre || !ILt || !IE || IL->getExitingBlock() != ILt)
			return false;
		// The back edge: next < N, next = iv + St, iv starting at S.
		Value *next = nullptr, *N = nullptr;
		bool sgn = false;
		if (!lt(dyn_cast<BranchInst>(ILt->getTerminator()), IH, next, N, sgn))
			return false;
		auto *nx = dyn_cast<BinaryOperator>(next);
		if (!nx || nx->getOpcode() != Instruction::Add)
			return false;
		PHINode *iv = nullptr;
		Value *St = nullptr;
		for (unsigned k = 0; k < 2 && !iv; k++)
			if (auto *p = dyn_cast<PHINode>(nx->getOperand(k)))
				if (p->getParent() == IH && p->getNumIncomingValues() == 2 &&
				    p->getIncomingValueForBlock(ILt) == nx) {
					iv = p;
					St = nx->getOperand(1 - k);
				}
		if (!iv || !TL->isLoopInvariant(N) || !TL->isLoopInvariant(St) ||
		    !iv->getType()->isIntegerTy() || iv->getType()->getIntegerBitWidth() < 32 ||
		    iv->getType()->getIntegerBitWidth() > 64)
			return false;
		Value *S = iv->getIncomingValueForBlock(IPre);
		// The guard S < N before the loop, if any.
		BranchInst *GB = nullptr;
		BasicBlock *G = IPre->getSinglePredecessor();
		if (G && TL->contains(G) && !IL->contains(G)) {
			auto *br = dyn_cast<BranchInst>(G->getTerminator());
			Value *gl = nullptr, *gr = nullptr;
			bool gs = false;
			if (lt(br, IPre, gl, gr, gs) && gs == sgn && gl == S && gr == N &&
			    TL->contains(br->getSuccessor(0)) && TL->contains(br->getSuccessor(1)))
				GB = br;
		}
		// S(t) = lo' + k or lo' for the loop's k-th thread, in S's width.
		auto *AR = dyn_cast<SCEVAddRecExpr>(SE.getSCEV(S));
		if (!AR || AR->getLoop() != TL || !AR->isAffine())
			return false;
		auto *step = dyn_cast<SCEVConstant>(AR->getStepRecurrence(SE));
		if (!step || step->getAPInt().ugt(1))
			return false;
		const SCEV *btc = SE.getBackedgeTakenCount(TL);
		if (isa<SCEVCouldNotCompute>(btc))
			return false;
		Type *Ty = S->getType();
		const SCEV *last = AR->evaluateAtIteration(SE.getTruncateOrZeroExtend(btc, Ty), SE);
		Instruction *IP = Pre->getTerminator();
		SCEVExpander Exp(SE, DL, "onetrip");
		if (!Exp.isSafeToExpandAt(AR->getStart(), IP) || !Exp.isSafeToExpandAt(last, IP))
			return false;
		if (auto *I = dyn_cast<Instruction>(N))
			if (!DT.dominates(I, IP))
				return false;
		if (auto *I = dyn_cast<Instruction>(St))
			if (!DT.dominates(I, IP))
				return false;
		Value *lo = Exp.expandCodeFor(AR->getStart(), Ty, IP);
		Value *hi = Exp.expandCodeFor(last, Ty, IP);
		IRBuilder<> pb(IP);
		// No wrap from the first thread to the last (a step of one wraps at
		// most once over fewer than 2^32 threads), none adding the stride
		// (signed: to the first's start or the last's), in the loop's
		// compare's signedness.
		Value *ok = sgn ? pb.CreateICmpSLE(lo, hi) : pb.CreateICmpULE(lo, hi);
		Intrinsic::ID addo =
		    sgn ? Intrinsic::sadd_with_overflow : Intrinsic::uadd_with_overflow;
		for (Value *end : {hi, lo}) {
			Value *ov = pb.CreateBinaryIntrinsic(addo, end, St);
			ok = pb.CreateAnd(ok, pb.CreateNot(pb.CreateExtractValue(ov, 1)));
			if (!sgn)
				break; // (lo + St cannot overflow where hi + St does not)
		}
		Value *first = pb.CreateAdd(lo, St);
		ok =
		    pb.CreateAnd(ok, sgn ? pb.CreateICmpSGE(first, N) : pb.CreateICmpUGE(first, N));
		if (GB)
			ok = pb.CreateAnd(ok,
			                  sgn ? pb.CreateICmpSLT(hi, N) : pb.CreateICmpULT(hi, N));
		// The copy.
		ValueToValueMapTy vm;
		SmallVector<BasicBlock *, 16> copies;
		SmallPtrSet<BasicBlock *, 16> in;
		Function *Fn = H->getParent();
		for (BasicBlock *bb : TL->blocks()) {
			BasicBlock *c = CloneBasicBlock(bb, vm, ".ot", Fn);
			vm[bb] = c;
			copies.push_back(c);
			in.insert(c);
		}
		for (BasicBlock *c : copies)
			for (Instruction &I : *c)
				RemapInstruction(&I, vm,
				                 RF_NoModuleLevelChanges | RF_IgnoreMissingLocals);
		auto mapped = [&](Value *v) {
			Value *m = vm.lookup(v);
			return m ? m : v;
		};
		BasicBlock *Lt2 = cast<BasicBlock>(vm[Lt]);
		for (PHINode &X : E->phis())
			X.addIncoming(mapped(X.getIncomingValueForBlock(Lt)), Lt2);
		if (MDNode *old = Lt->getTerminator()->getMetadata(LLVMContext::MD_loop)) {
			SmallVector<Metadata *, 4> ops{nullptr};
			for (unsigned i = 1; i < old->getNumOperands(); i++)
				ops.push_back(old->getOperand(i));
			MDNode *md = MDNode::getDistinct(H->getContext(), ops);
			md->replaceOperandWith(0, md);
			Lt2->getTerminator()->setMetadata(LLVMContext::MD_loop, md);
		}
		// One trip: the back edge and the guard go.
		BasicBlock *ILt2 = cast<BasicBlock>(vm[ILt]), *IH2 = cast<BasicBlock>(vm[IH]);
		IH2->removePredecessor(ILt2);
		Instruction *t2 = ILt2->getTerminator();
		BranchInst::Create(cast<BasicBlock>(vm[IE]), t2);
		t2->eraseFromParent();
		if (GB) {
			auto *G2 = cast<BasicBlock>(vm[G]);
			Instruction *g2 = G2->getTerminator();
			BasicBlock *skip =
			    cast<BasicBlock>(vm[GB->getSuccessor(0) == IPre ? GB->getSuccessor(1)
			                                                    : GB->getSuccessor(0)]);
			skip->removePredecessor(G2);
			BranchInst::Create(cast<BasicBlock>(vm[IPre]), g2);
			g2->eraseFromParent();
		}
		auto *PT = cast<BranchInst>(Pre->getTerminator());
		BranchInst::Create(cast<BasicBlock>(vm[H]), H, ok, PT);
		PT->eraseFromParent();
		// What is left folds: single-entry phis, the selects of the first
		// thread's peeled compare.
		const SimplifyQuery SQ(DL);
		for (bool again = true; again;) {
			again = false;
			for (BasicBlock *c : copies)
				for (Instruction &I : make_early_inc_range(*c)) {
					if (Value *v = simplifyInstruction(&I, SQ)) {
						I.replaceAllUsesWith(v);
						again = true;
					}
					if (isInstructionTriviallyDead(&I)) {
						I.eraseFromParent();
						again = true;
					}
				}
		}
		// A maximum of a value every thread computes alike: once, before.
		BasicBlock *H2 = cast<BasicBlock>(vm[H]);
		for (PHINode &P : make_early_inc_range(H2->phis())) {
			if (P.getNumIncomingValues() != 2 || !P.hasOneUse())
				continue;
			auto *mx = dyn_cast<IntrinsicInst>(P.getIncomingValueForBlock(Lt2));
			if (!mx || mx->getIntrinsicID() != Intrinsic::umax || *P.user_begin() != mx)
				continue;
			Value *v = mx->getArgOperand(0) == &P ? mx->getArgOperand(1)
			                                      : mx->getArgOperand(0);
			if (v == &P || !mx->hasNUses(2) || !hoist(v, in, Pre->getTerminator()))
				continue;
			IRBuilder<> hb(Pre->getTerminator());
			Value *once = hb.CreateBinaryIntrinsic(Intrinsic::umax,
			                                       P.getIncomingValueForBlock(Pre), v);
			for (PHINode &X : E->phis())
				if (X.getIncomingValueForBlock(Lt2) == mx)
					X.setIncomingValueForBlock(Lt2, once);
			if (!mx->hasOneUse())
				continue; // (used elsewhere: leave it)
			P.replaceAllUsesWith(PoisonValue::get(P.getType()));
			mx->replaceAllUsesWith(PoisonValue::get(mx->getType()));
			mx->eraseFromParent();
			P.eraseFromParent();
		}
		for (BasicBlock *c : copies)
			if (c != H2 && !c->hasNPredecessors(0))
				MergeBlockIntoPredecessor(c);
		if (std::getenv("CTA_KC_VERBOSE"))
			errs() << "ctasim-kc: " << Fn->getName()
			       << ": a thread loop whose loop inside makes one trip a thread, "
			          "copied without it\n";
		return true;
	}
	PreservedAnalyses run(Function &F, FunctionAnalysisManager &FAM)
	{
		if (!F.getName().endswith("__kc_fis") ||
		    F.getParent()->getNamedGlobal("cta__kc_sanitized") ||
		    std::getenv("CTA_KC_NO_ONETRIP"))
			return PreservedAnalyses::all();
		auto &TLI = FAM.getResult<TargetLibraryAnalysis>(F);
		auto &AC = FAM.getResult<AssumptionAnalysis>(F);
		const DataLayout &DL = F.getParent()->getDataLayout();
		bool changed = false;
		std::set<BasicBlock *> tried;
		for (int round = 0; round < 16; round++) {
			DominatorTree DT(F);
			LoopInfo LI(DT);
			ScalarEvolution SE(F, TLI, AC, DT, LI);
			Loop *pick = nullptr;
			for (Loop *L : LI.getLoopsInPreorder())
				if (isThread(L) && L->getSubLoops().size() == 1 &&
				    !tried.count(L->getHeader())) {
					pick = L;
					break;
				}
			if (!pick)
				break;
			tried.insert(pick->getHeader());
			changed |= simplifyLoop(pick, &DT, &LI, &SE, &AC, nullptr, false);
			changed |= formLCSSARecursively(*pick, DT, &LI, &SE);
			if (run1(pick, DT, LI, SE, DL)) {
				changed = true;
				// (The copy's header is new: not tried again.)
			}
		}
		return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
	}
	static bool isRequired()
	{
		return true;
	}
};

} // namespace

#include "san_probe.h"
// (After the probe: its spans serve the loop form's untested copies.)
#include "san_pass.h"

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo()
{
	return {
	    LLVM_PLUGIN_API_VERSION, "ctasim-regions", "1", [](PassBuilder &PB) {
		    PB.registerPipelineStartEPCallback(
		        [](ModulePassManager &MPM, OptimizationLevel) {
			        MPM.addPass(RegionsPass());
		        });
		    PB.registerPeepholeEPCallback([](FunctionPassManager &FPM, OptimizationLevel) {
			    FPM.addPass(LaneScopePass());
		    });
		    PB.registerVectorizerStartEPCallback(
		        [](FunctionPassManager &FPM, OptimizationLevel) {
			        // The lane's clock became a register at the peephole
			        // point (LaneScopePass), after the pipeline's
			        // reassociation: cta_spin_ns's two loop-invariant
			        // terms (the scaled cost and the SM's add) were
			        // then added to it one by one; grouped, the later
			        // LICM adds them once outside the loop.
			        FPM.addPass(ReassociatePass());
			        FPM.addPass(NarrowPass());
			        FPM.addPass(PeelFirstPass());
			        FPM.addPass(GuardFreePass());
			        FPM.addPass(OneTripPass());
		        });
		    PB.registerOptimizerLastEPCallback(
		        [](ModulePassManager &MPM, OptimizationLevel) {
			        MPM.addPass(SanProbePass());
			        MPM.addPass(SanSharedPass());
			        MPM.addPass(OutlinePass());
		        });
		    PB.registerPipelineParsingCallback([](StringRef name, ModulePassManager &MPM,
		                                          ArrayRef<PassBuilder::PipelineElement>) {
			    if (name != "ctasim-regions")
				    return false;
			    MPM.addPass(RegionsPass());
			    return true;
		    });
	    }};
}
