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
#include <cstdlib>
#include <set>
#include <string>

#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"

using namespace llvm;

namespace {

const char *const kBarrier = "cta__syncthreads";
const char *const kSuffix = "__kc_body";

// Calls that wait for, or depend on, other threads in ways the region form
// does not model (the engine's lanes do): the body stays on fibers.
bool isWaitingCall(StringRef n)
{
	return n == "cta__cluster_sync" || n == "cta__syncthreads_rule" || n == "cta__grid_sync" ||
	       n.startswith("cta__mbarrier_") || n.startswith("cta__clc_") ||
	       n == "cta__for_each_canceled_block" || n == "cta__try_cancel_blocks";
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
			if (isWaitingCall(n))
				return "it calls " + n.str() + where(I) +
				       " (CLC, mbarrier and cluster waits run on fibers)";
			if (!callee->isDeclaration()) {
				std::string why = check(*callee, false, FAM);
				if (!why.empty())
					return why;
			}
		}
		// A loop that reads memory another thread writes (an atomic or
		// volatile load) may spin until a thread after it in the region
		// writes: only a lane of its own lets that thread run.
		auto &LI = FAM.getResult<LoopAnalysis>(const_cast<Function &>(F));
		// So may a loop of yield points (atomics, fences, volatile loads,
		// kernel.h's cta__poll): cta__spin_poll suspends a spinning thread
		// on its fiber (docs/FORWARD_PROGRESS.md).
		for (const Instruction &I : instructions(F)) {
			const auto *L = dyn_cast<LoadInst>(&I);
			const auto *CB = dyn_cast<CallBase>(&I);
			std::set<const Function *> st;
			bool poll = CB && CB->getCalledFunction() &&
			            reachesPoll(*CB->getCalledFunction(), st);
			if (!poll && (!L || !(L->isVolatile() || L->isAtomic())))
				continue;
			if (LI.getLoopFor(I.getParent()))
				return "it spins on memory" + where(I) + " in " + F.getName().str();
		}
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
				if (c->getName() == kBarrier)
					return true;
				if (!c->isDeclaration() && reachesBarrier(*c, stack))
					return true;
			}
	return false;
}

void inlineBarrierHelpers(Function &F)
{
	for (int round = 0; round < 16; round++) {
		SmallVector<CallBase *, 8> todo;
		for (Instruction &I : instructions(F))
			if (auto *CB = dyn_cast<CallBase>(&I))
				if (Function *c = CB->getCalledFunction())
					if (!c->isDeclaration() && c != &F) {
						std::set<const Function *> st;
						if (reachesBarrier(*c, st))
							todo.push_back(CB);
					}
		if (todo.empty())
			return;
		for (CallBase *CB : todo) {
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
	Value *id = B.CreateCall(decl(Intrinsic::coro_id),
	                         {B.getInt32(16), nullp, nullp, nullp}, "kc.id");
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
		CallInst *arr = b.CreateCall(arriveFn, {CI->getArgOperand(0), CI->getArgOperand(1)});
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

struct RegionsPass : PassInfoMixin<RegionsPass> {
	PreservedAnalyses run(Module &M, ModuleAnalysisManager &MAM)
	{
		auto &FAM = MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
		const bool verbose = std::getenv("CTA_KC_VERBOSE") != nullptr;
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
				errs() << "ctasim-kc: " << base
				       << ": no descriptor (compile through compiler/kc_kernel.h)\n";
				continue;
			}
			inlineBarrierHelpers(*F);
			FAM.invalidate(*F, PreservedAnalyses::none());
			Checker ck;
			std::string why = ck.check(*F, true, FAM);
			SmallVector<CallInst *, 8> bars;
			for (Instruction &I : instructions(*F))
				if (auto *CI = dyn_cast<CallInst>(&I))
					if (Function *c = CI->getCalledFunction())
						if (c->getName() == kBarrier)
							bars.push_back(CI);
			if (why.empty() && bars.empty())
				why = "no __syncthreads: the plain thread loop is already a loop";
			changed = true;
			if (!why.empty()) {
				if (verbose)
					errs() << "ctasim-kc: " << base << ": fibers: " << why << "\n";
				setDescField(D, 2,
				             IRBuilder<>(M.getContext())
				                 .CreateGlobalStringPtr(why, base + "__kc_why", 0, &M));
				continue;
			}
			Function *R = toRegions(*F, bars);
			F->replaceAllUsesWith(R);
			F->eraseFromParent();
			setDescField(D, 2,
			             ConstantPointerNull::get(PointerType::getUnqual(M.getContext())));
			if (verbose)
				errs() << "ctasim-kc: " << base << ": regions (" << bars.size()
				       << " barrier(s))\n";
		}
		return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
	}
	static bool isRequired() { return true; }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo()
{
	return {LLVM_PLUGIN_API_VERSION, "ctasim-regions", "1", [](PassBuilder &PB) {
		        PB.registerPipelineStartEPCallback(
		            [](ModulePassManager &MPM, OptimizationLevel) {
			            MPM.addPass(RegionsPass());
		            });
		        PB.registerPipelineParsingCallback(
		            [](StringRef name, ModulePassManager &MPM,
		               ArrayRef<PassBuilder::PipelineElement>) {
			            if (name != "ctasim-regions")
				            return false;
			            MPM.addPass(RegionsPass());
			            return true;
		            });
	        }};
}
