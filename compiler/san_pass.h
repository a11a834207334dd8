// The sanitizer's part of the kernel compiler (included by regions_pass.cpp):
// in the copies instrumented for --sanitize, the loop form tests its own
// accesses to the block's declared shared memory, so that racecheck and
// initcheck cost a few instructions an access rather than a call into the
// runtime (sim/sanitize/sanitize.c, docs/SANITIZE.md).
//
// Runs after the optimisations and before the kernel-address pass. At the
// start of each loop-form function it asks the runtime for the block's
// granule words and the epoch (cta__san_region, struct cta__san_fast in
// sim/sanitize/sanitize.h); before each load and store it tests whether the
// address is in the declared shared bytes, and there, for an access of 8
// aligned bytes, applies racecheck's or initcheck's rule to the granule's
// word inline. Anything else there (a conflict to report, a granule whose
// bytes differ, another size, an instruction without its index in the
// runtime's table yet) calls cta__san_slow, which decides as the runtime
// does for every access, with this instruction's place. Outside them it
// makes the kernel-address test itself (the kernel-address pass leaves these
// accesses alone), with the same call where the shadow is marked. memcheck
// runs get cap 0: every access takes that test.

#include "llvm/Analysis/ValueTracking.h"

namespace
{

struct SanSharedPass : PassInfoMixin<SanSharedPass> {
	// Word layout of sim/sanitize/sanitize.c: per half, the epoch in 21
	// bits and the thread above it.
	static constexpr unsigned kEpBits = 21;
	static constexpr uint32_t kEpMax = (1u << kEpBits) - 1;
	static constexpr uint32_t kMany = (1u << 11) - 1;
	static constexpr unsigned kToolRacecheck = 2;

	static void nosan(Instruction *I)
	{
		I->setMetadata(LLVMContext::MD_nosanitize, MDNode::get(I->getContext(), {}));
	}

	static bool wanted(Instruction &I, Value *&ptr, Type *&ty, bool &write)
	{
		if (I.getMetadata(LLVMContext::MD_nosanitize))
			return false;
		if (auto *L = dyn_cast<LoadInst>(&I)) {
			if (L->isAtomic())
				return false;
			ptr = L->getPointerOperand();
			ty = L->getType();
			write = false;
		} else if (auto *S = dyn_cast<StoreInst>(&I)) {
			if (S->isAtomic())
				return false;
			ptr = S->getPointerOperand();
			ty = S->getValueOperand()->getType();
			write = true;
		} else {
			return false;
		}
		if (ptr->getType()->getPointerAddressSpace() != 0 || isa<ScalableVectorType>(ty))
			return false;
		// The frame, the lane, the argument copy and globals are never
		// shared memory.
		const Value *u = getUnderlyingObject(ptr);
		return !isa<AllocaInst>(u) && !isa<Argument>(u) && !isa<GlobalVariable>(u);
	}

	static void instrument(Function &F)
	{
		Module &M = *F.getParent();
		LLVMContext &C = F.getContext();
		const DataLayout &DL = M.getDataLayout();
		Type *i8 = Type::getInt8Ty(C), *i16 = Type::getInt16Ty(C);
		Type *i32 = Type::getInt32Ty(C), *i64 = Type::getInt64Ty(C);
		PointerType *ptrT = PointerType::getUnqual(C);
		std::vector<Instruction *> acc;
		for (Instruction &I : instructions(F)) {
			Value *p;
			Type *t;
			bool w;
			if (wanted(I, p, t, w))
				acc.push_back(&I);
		}
		if (acc.empty())
			return;
		Value *lane = F.getArg(1);
		FunctionCallee regionFn = M.getOrInsertFunction("cta__san_region", ptrT, ptrT);
		FunctionCallee slowFn =
		    M.getOrInsertFunction("cta__san_slow", Type::getVoidTy(C), i64, i64, ptrT);
		IRBuilder<> e(&*F.getEntryBlock().getFirstInsertionPt());
		Value *fs = e.CreateCall(regionFn, {lane});
		auto field = [&](Type *t, unsigned off) {
			LoadInst *L = e.CreateLoad(t, e.CreateConstInBoundsGEP1_64(i8, fs, off));
			nosan(L);
			return L;
		};
		Value *smem = field(i64, 0), *cap = field(i64, 8), *g = field(ptrT, 16);
		Value *shadow = field(i64, 24), *ep = field(i32, 32), *base = field(i32, 36);
		Value *isRc = e.CreateICmpEQ(field(i32, 40), e.getInt32(kToolRacecheck));
		auto laneField = [&](IRBuilder<> &b, unsigned off) {
			LoadInst *L =
			    b.CreateLoad(i32, b.CreateConstInBoundsGEP1_64(i8, lane, off));
			nosan(L);
			return L;
		};
		Value *bx = laneField(e, 24), *by = laneField(e, 28);
		Value *epMask = ConstantInt::get(i32, kEpMax);
		for (Instruction *I : acc) {
			Value *p;
			Type *ty;
			bool write;
			wanted(*I, p, ty, write);
			uint64_t n = DL.getTypeStoreSize(ty);
			// The kernel-address pass leaves it to this test.
			nosan(I);
			auto *site = new GlobalVariable(M, i32, false, GlobalValue::InternalLinkage,
			                                ConstantInt::get(i32, 0), "cta__san_site");
			IRBuilder<> b(I);
			Value *a = b.CreatePtrToInt(p, i64);
			Value *off = b.CreateSub(a, smem);
			Value *inr = b.CreateICmpULT(off, cap);
			BasicBlock *head = I->getParent();
			BasicBlock *cont = head->splitBasicBlock(I, "san.cont");
			head->getTerminator()->eraseFromParent();
			BasicBlock *chk = BasicBlock::Create(C, "san.chk", &F, cont);
			BasicBlock *asan = BasicBlock::Create(C, "san.asan", &F, cont);
			BasicBlock *slow = BasicBlock::Create(C, "san.slow", &F, cont);
			b.SetInsertPoint(head);
			b.CreateCondBr(inr, chk, asan);
			// The call that decides what the inline tests cannot.
			b.SetInsertPoint(slow);
			CallInst *sc =
			    b.CreateCall(slowFn, {a, b.getInt64(n * 2 + (write ? 1 : 0)), site});
			sc->setDebugLoc(I->getDebugLoc());
			b.CreateBr(cont);
			// Elsewhere, the kernel-address test: the shadow byte of the
			// first byte (two for 16 bytes) is 0, or for 1, 2 and 4 bytes
			// counts as many valid leading bytes as the access needs.
			b.SetInsertPoint(asan);
			Value *sa = b.CreateIntToPtr(
			    b.CreateAdd(b.CreateLShr(a, b.getInt64(3)), shadow), ptrT);
			if (n == 16) {
				LoadInst *k = b.CreateLoad(i16, sa);
				nosan(k);
				b.CreateCondBr(b.CreateICmpEQ(k, b.getInt16(0)), cont, slow);
			} else if (n == 8 || n == 4 || n == 2 || n == 1) {
				LoadInst *k = b.CreateLoad(i8, sa);
				nosan(k);
				Value *clean = b.CreateICmpEQ(k, b.getInt8(0));
				if (n < 8) {
					Value *last =
					    b.CreateTrunc(b.CreateAdd(b.CreateAnd(a, b.getInt64(7)),
					                              b.getInt64(n - 1)),
					                  i8);
					clean = b.CreateOr(clean, b.CreateICmpSLT(last, k));
				}
				b.CreateCondBr(clean, cont, slow);
			} else {
				b.CreateBr(slow);
			}
			b.SetInsertPoint(chk);
			if (n != 8) {
				b.CreateBr(slow);
				continue;
			}
			Value *aligned =
			    b.CreateICmpEQ(b.CreateAnd(off, b.getInt64(7)), b.getInt64(0));
			Value *gi = b.CreateLShr(off, b.getInt64(3));
			Value *gptr = b.CreateInBoundsGEP(i64, g, gi);
			LoadInst *G = b.CreateLoad(i64, gptr);
			nosan(G);
			Value *ok0 = b.CreateAnd(aligned, b.CreateICmpNE(G, b.getInt64(~0ull)));
			Value *lo = b.CreateTrunc(G, i32);
			BasicBlock *rc = BasicBlock::Create(C, "san.rc", &F, cont);
			BasicBlock *ic = BasicBlock::Create(C, "san.ic", &F, cont);
			b.CreateCondBr(isRc, rc, ic);
			// initcheck: a write marks the granule written in this epoch;
			// a read must find it written in this block.
			b.SetInsertPoint(ic);
			if (write) {
				BasicBlock *upd = BasicBlock::Create(C, "san.icw", &F, cont);
				b.CreateCondBr(ok0, upd, slow);
				b.SetInsertPoint(upd);
				nosan(b.CreateStore(b.CreateZExt(ep, i64), gptr));
				b.CreateBr(cont);
			} else {
				Value *done = b.CreateICmpUGE(b.CreateAnd(lo, epMask), base);
				b.CreateCondBr(b.CreateAnd(ok0, done), cont, slow);
			}
			// racecheck (the granule layout of sim/sanitize/sanitize.c):
			// this thread's own in this epoch, or another epoch's; a read
			// may also follow other threads' reads.
			b.SetInsertPoint(rc);
			Value *tx = laneField(b, 0), *ty2 = laneField(b, 4), *tz = laneField(b, 8);
			Value *rank =
			    b.CreateAdd(tx, b.CreateMul(bx, b.CreateAdd(ty2, b.CreateMul(by, tz))));
			Value *mine = b.CreateOr(ep, b.CreateShl(rank, kEpBits));
			LoadInst *sid = b.CreateLoad(i32, site);
			nosan(sid);
			Value *same = b.CreateICmpEQ(b.CreateAnd(lo, epMask), ep);
			Value *own = b.CreateICmpEQ(lo, mine);
			Value *wrote =
			    b.CreateICmpNE(b.CreateAnd(G, b.getInt64(1ull << 32)), b.getInt64(0));
			Value *ok = b.CreateAnd(ok0, b.CreateICmpNE(sid, b.getInt32(0)));
			Value *pc = b.CreateShl(b.CreateZExt(sid, i64), 48);
			Value *nG;
			if (write) {
				ok = b.CreateAnd(ok, b.CreateOr(b.CreateNot(same), own));
				nG = b.CreateOr(b.CreateZExt(mine, i64),
				                b.CreateOr(pc, b.getInt64(1ull << 32)));
			} else {
				ok = b.CreateAnd(ok,
				                 b.CreateOr(b.CreateNot(same),
				                            b.CreateOr(own, b.CreateNot(wrote))));
				Value *many = b.CreateOr(ep, b.getInt32(kMany << kEpBits));
				Value *who =
				    b.CreateSelect(b.CreateAnd(same, b.CreateNot(own)), many, mine);
				nG = b.CreateSelect(b.CreateAnd(own, wrote), G,
				                    b.CreateOr(b.CreateZExt(who, i64), pc));
			}
			BasicBlock *upd = BasicBlock::Create(C, "san.rcu", &F, cont);
			b.CreateCondBr(ok, upd, slow);
			b.SetInsertPoint(upd);
			nosan(b.CreateStore(nG, gptr));
			b.CreateBr(cont);
		}
	}

	PreservedAnalyses run(Module &M, ModuleAnalysisManager &)
	{
		if (!M.getNamedGlobal("cta__kc_sanitized"))
			return PreservedAnalyses::all();
		bool changed = false;
		for (Function &F : M)
			if (!F.isDeclaration() && F.getName().endswith("__kc_fis") &&
			    F.arg_size() >= 2) {
				instrument(F);
				changed = true;
			}
		return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
	}
	static bool isRequired()
	{
		return true;
	}
};

} // namespace
