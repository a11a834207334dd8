// The sanitizer's probe of a barrier-free body (included by regions_pass.cpp;
// docs/SANITIZE.md): in the plain objects (not the KC_SANITIZED ones), each
// kernel comes with NAME__kc_probe_src (KC_PROBE in kc_kernel.h), the vector
// form's run of threads over the body as one loop. This pass turns it into
// NAME__kc_probe(args, lane, idx), which runs none of the body: it returns 1
// only when every byte that the run of threads from idx's tid.x to the
// lane's row_end may load or store has a clear (zero) shadow byte, tested by
// the runtime (cta__san_clear). gcc's instrumented copy of the body
// (kernels/sanitized.c) then calls nothing at all for that run, and runs
// the plain build's vector loop instead (kernels/sanitized_fast.c); where
// the probe returns 0 it runs its own, testing each access.
//
// The probe is made only when every access of the run is at an address
// that is the same in every thread or affine in the thread index (an
// AddRec of the thread loop with a constant step), the loop's trip count
// is known, and the run makes no call but to intrinsics that touch no
// memory. An access of the thread k is then at first + k * step, and the
// bytes of every thread lie in [min(first, last), max(first, last) + size)
// where last is the access of the loop's last thread: computed whether the
// thread makes the access or not (a guarded access widens the range, which
// can only send the run to the tested copy). The runtime refuses a range
// whose ends are out of order (the address wrapped). Otherwise the probe is
// dropped, and the tested copy runs every time.

namespace
{

struct SanProbePass : PassInfoMixin<SanProbePass> {
	static constexpr const char *kSrc = "__kc_probe_src";

	// One access: its bytes are first .. last + size - 1 (first <= last).
	struct Span {
		const SCEV *first, *last;
		uint64_t size;
	};

	// A test the probe makes before it trusts its spans: lhs pred rhs.
	struct Cond {
		const SCEV *lhs;
		CmpInst::Predicate pred;
		const SCEV *rhs;
	};

	// Rewrites ext({a,+,c}<L>) (an index of the thread loop computed in a
	// narrower type, as C's int i = blockIdx.x * blockDim.x + threadIdx.x)
	// as {ext a,+,ext c}<L>, which it is as long as the narrow sequence does
	// not wrap over the loop's iterations: the test of its last value,
	// computed in the wide type (where it cannot wrap: c < 2^30 and the
	// count < 2^20), goes to conds.
	struct Widen : SCEVRewriteVisitor<Widen> {
		const Loop *L;
		const SCEV *btc;
		std::vector<Cond> &conds;
		Widen(ScalarEvolution &se, const Loop *l, const SCEV *b, std::vector<Cond> &c)
		    : SCEVRewriteVisitor(se), L(l), btc(b), conds(c)
		{
		}
		const SCEV *widen(const SCEV *op, Type *T, bool sgn)
		{
			auto *AR = dyn_cast<SCEVAddRecExpr>(op);
			auto *c = AR ? dyn_cast<SCEVConstant>(AR->getStepRecurrence(SE)) : nullptr;
			if (!AR || AR->getLoop() != L || !AR->isAffine() || !c ||
			    !SE.isLoopInvariant(AR->getStart(), L) ||
			    c->getAPInt().abs().ugt(1u << 30) || SE.getTypeSizeInBits(T) != 64 ||
			    SE.getTypeSizeInBits(btc->getType()) > 64)
				return nullptr;
			const unsigned w = SE.getTypeSizeInBits(op->getType());
			const SCEV *a = sgn ? SE.getSignExtendExpr(AR->getStart(), T)
			                    : SE.getZeroExtendExpr(AR->getStart(), T);
			const SCEV *st = SE.getSignExtendExpr(c, T);
			const SCEV *last =
			    SE.getAddExpr(a, SE.getMulExpr(st, SE.getNoopOrZeroExtend(btc, T)));
			auto k = [&](const APInt &v) { return SE.getConstant(v.sext(64)); };
			if (sgn)
				conds.push_back(c->getAPInt().isNegative()
				                    ? Cond{last, CmpInst::ICMP_SGE,
				                           k(APInt::getSignedMinValue(w))}
				                    : Cond{last, CmpInst::ICMP_SLE,
				                           k(APInt::getSignedMaxValue(w))});
			else
				conds.push_back(
				    c->getAPInt().isNegative()
				        ? Cond{last, CmpInst::ICMP_SGE, SE.getZero(T)}
				        : Cond{last, CmpInst::ICMP_ULE,
				               SE.getConstant(APInt::getMaxValue(w).zext(64))});
			return SE.getAddRecExpr(a, st, L, SCEV::FlagAnyWrap);
		}
		const SCEV *visitSignExtendExpr(const SCEVSignExtendExpr *E)
		{
			if (const SCEV *r = widen(E->getOperand(), E->getType(), true))
				return r;
			return SCEVRewriteVisitor::visitSignExtendExpr(E);
		}
		const SCEV *visitZeroExtendExpr(const SCEVZeroExtendExpr *E)
		{
			if (const SCEV *r = widen(E->getOperand(), E->getType(), false))
				return r;
			return SCEVRewriteVisitor::visitZeroExtendExpr(E);
		}
	};

	// The spans of F's loads and stores (its frame's excepted), or false.
	static bool spans(Function &F, Loop *L, LoopInfo &LI, ScalarEvolution &SE,
	                  std::vector<Span> &out, std::vector<Cond> &conds, std::string &why)
	{
		const DataLayout &DL = F.getParent()->getDataLayout();
		const SCEV *btc = SE.getBackedgeTakenCount(L);
		if (isa<SCEVCouldNotCompute>(btc) || SE.getTypeSizeInBits(btc->getType()) > 64) {
			why = "the thread loop's trip count is not known";
			return false;
		}
		// (Known from the guard only: tested where the run starts.)
		conds.push_back({btc, CmpInst::ICMP_ULT, SE.getConstant(btc->getType(), 1u << 20)});
		Widen wide(SE, L, btc, conds);
		for (Instruction &I : instructions(F)) {
			// (Another loop's accesses are its own run's.)
			Loop *in = LI.getLoopFor(I.getParent());
			if (in && in != L)
				continue;
			if (auto *CB = dyn_cast<CallBase>(&I)) {
				auto *II = dyn_cast<IntrinsicInst>(CB);
				if (II &&
				    (isa<DbgInfoIntrinsic>(II) || II->isLifetimeStartOrEnd() ||
				     !II->mayReadOrWriteMemory()))
					continue;
				why = "a call";
				return false;
			}
			if (!I.mayReadOrWriteMemory())
				continue;
			Value *ptr;
			Type *ty;
			if (auto *Ld = dyn_cast<LoadInst>(&I)) {
				if (!Ld->isSimple()) {
					why = "an atomic or volatile load";
					return false;
				}
				ptr = Ld->getPointerOperand();
				ty = Ld->getType();
			} else if (auto *St = dyn_cast<StoreInst>(&I)) {
				if (!St->isSimple()) {
					why = "an atomic or volatile store";
					return false;
				}
				ptr = St->getPointerOperand();
				ty = St->getValueOperand()->getType();
			} else {
				why = "an access that is neither a load nor a store";
				return false;
			}
			// The probe's own locals (the copies of the arguments and
			// indices: the tested copy's frame), the argument copy, the
			// lane and the indices: the simulator's memory, whose shadow
			// is never marked (as san_pass.h's wanted() says).
			const Value *u = getUnderlyingObject(ptr, 0);
			if (isa<AllocaInst>(u) || isa<Argument>(u))
				continue;
			if (isa<ScalableVectorType>(ty)) {
				why = "a scalable vector access";
				return false;
			}
			const uint64_t size = DL.getTypeStoreSize(ty).getFixedValue();
			const SCEV *S = wide.visit(SE.getSCEV(ptr));
			auto add = [&](const SCEV *first, const SCEV *last) {
				for (const Span &o : out)
					if (o.first == first && o.last == last && o.size == size)
						return; // (a load and the store that follows it)
				out.push_back({first, last, size});
			};
			if (SE.isLoopInvariant(S, L)) {
				add(S, S);
				continue;
			}
			auto *AR = dyn_cast<SCEVAddRecExpr>(S);
			auto *step =
			    AR ? dyn_cast<SCEVConstant>(AR->getStepRecurrence(SE)) : nullptr;
			if (!AR || AR->getLoop() != L || !AR->isAffine() ||
			    !SE.isLoopInvariant(AR->getStart(), L) || !step ||
			    step->getAPInt().abs().ugt(1u << 30)) {
				why = "an access not affine in the thread index";
				return false;
			}
			const SCEV *last = AR->evaluateAtIteration(
			    SE.getTruncateOrZeroExtend(btc, AR->getType()->isPointerTy()
			                                        ? DL.getIntPtrType(AR->getType())
			                                        : AR->getType()),
			    SE);
			if (step->getAPInt().isNegative())
				add(last, AR->getStart());
			else
				add(AR->getStart(), last);
		}
		return true;
	}

	// NAME__kc_probe_src as the probe; false (F untouched) where it cannot.
	static bool build(Function &F, FunctionAnalysisManager &FAM, std::string &why)
	{
		LoopInfo &LI = FAM.getResult<LoopAnalysis>(F);
		ScalarEvolution &SE = FAM.getResult<ScalarEvolutionAnalysis>(F);
		// The thread loop, or its copies on paths of their own (loop
		// unswitching makes one per value of a test the run makes once):
		// each is the whole run where it is entered.
		auto &loops = LI.getTopLevelLoops();
		if (loops.empty()) {
			why = "no thread loop";
			return false;
		}
		for (Loop *L : loops) {
			if (!L->isInnermost() || !L->getLoopPreheader()) {
				why = "a loop inside the thread loop, or no preheader";
				return false;
			}
			for (Loop *O : loops)
				if (O != L &&
				    isPotentiallyReachable(L->getHeader(), O->getHeader())) {
					why = "a thread loop after another";
					return false;
				}
		}
		const DataLayout &DL = F.getParent()->getDataLayout();
		SCEVExpander ex(SE, DL, "san.probe");
		std::vector<std::vector<Span>> sp(loops.size());
		std::vector<std::vector<Cond>> cs(loops.size());
		for (size_t k = 0; k < loops.size(); k++) {
			if (!spans(F, loops[k], LI, SE, sp[k], cs[k], why))
				return false;
			Instruction *at = loops[k]->getLoopPreheader()->getTerminator();
			for (const Span &s : sp[k])
				if (!ex.isSafeToExpandAt(s.first, at) ||
				    !ex.isSafeToExpandAt(s.last, at)) {
					why = "an address not known before the thread loop";
					return false;
				}
			for (const Cond &c : cs[k])
				if (!ex.isSafeToExpandAt(c.lhs, at)) {
					why = "an index not known before the thread loop";
					return false;
				}
		}
		LLVMContext &C = F.getContext();
		Type *i32 = Type::getInt32Ty(C), *i64 = Type::getInt64Ty(C);
		PointerType *ptrTy = PointerType::getUnqual(C);
		FunctionCallee clear =
		    F.getParent()->getOrInsertFunction("cta__san_clear", i32, ptrTy, ptrTy, i64);
		std::vector<Instruction *> ats;
		for (Loop *L : loops)
			ats.push_back(L->getLoopPreheader()->getTerminator());
		for (size_t k = 0; k < ats.size(); k++) {
			Instruction *at = ats[k];
			std::vector<std::pair<Value *, Value *>> ends;
			for (const Span &s : sp[k])
				ends.push_back({ex.expandCodeFor(s.first, ptrTy, at),
				                ex.expandCodeFor(s.last, ptrTy, at)});
			std::vector<Value *> tests;
			for (const Cond &c : cs[k]) {
				Value *l = ex.expandCodeFor(c.lhs, c.lhs->getType(), at);
				Value *r = ex.expandCodeFor(c.rhs, c.rhs->getType(), at);
				tests.push_back(IRBuilder<>(at).CreateICmp(c.pred, l, r));
			}
			IRBuilder<> b(at);
			b.SetCurrentDebugLocation(at->getDebugLoc());
			Value *ok = ConstantInt::get(i32, 1);
			for (Value *t : tests)
				ok = b.CreateAnd(ok, b.CreateZExt(t, i32));
			for (size_t i = 0; i < sp[k].size(); i++)
				ok = b.CreateAnd(
				    ok,
				    b.CreateCall(clear, {ends[i].first, ends[i].second,
				                         ConstantInt::get(i64, sp[k][i].size)}));
			b.CreateRet(ok);
		}
		for (Instruction *at : ats)
			at->eraseFromParent();
		removeUnreachableBlocks(F);
		return true;
	}

	PreservedAnalyses run(Module &M, ModuleAnalysisManager &MAM)
	{
		if (M.getNamedGlobal("cta__kc_sanitized"))
			return PreservedAnalyses::all();
		auto &FAM = MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
		const bool verbose = std::getenv("CTA_KC_VERBOSE") != nullptr;
		std::vector<Function *> srcs;
		for (Function &F : M)
			if (!F.isDeclaration() && F.getName().endswith(kSrc))
				srcs.push_back(&F);
		for (Function *F : srcs) {
			std::string base = F->getName().str();
			base.resize(base.size() - std::string(kSrc).size());
			std::string why;
			if (build(*F, FAM, why)) {
				// What kernels/sanitized_fast.c calls (weakly: without
				// it, the tested copy always runs).
				F->setName(base + "__kc_probe");
				F->setLinkage(GlobalValue::ExternalLinkage);
				F->setVisibility(GlobalValue::HiddenVisibility);
				if (verbose)
					errs()
					    << "ctasim-kc: " << base << ": sanitizer probe made\n";
			} else {
				// Never called: nothing of the body is left to run.
				F->deleteBody();
				F->setLinkage(GlobalValue::InternalLinkage);
				BasicBlock *bb = BasicBlock::Create(F->getContext(), "", F);
				ReturnInst::Create(
				    F->getContext(),
				    ConstantInt::get(Type::getInt32Ty(F->getContext()), 0), bb);
				if (verbose)
					errs() << "ctasim-kc: " << base << ": no sanitizer probe ("
					       << why << ")\n";
			}
			FAM.invalidate(*F, PreservedAnalyses::none());
		}
		return srcs.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
	}
};

} // namespace
