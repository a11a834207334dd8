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
#include "llvm/IR/PatternMatch.h"
#include "llvm/Support/KnownBits.h"
#include "llvm/Transforms/Scalar/LICM.h"
#include "llvm/Transforms/Scalar/LoopPassManager.h"

namespace
{

using namespace llvm::PatternMatch;

struct SanSharedPass : PassInfoMixin<SanSharedPass> {
	// Word layout of sim/sanitize/sanitize.c: per half, the epoch in 21
	// bits and the thread above it.
	static constexpr unsigned kEpBits = 21;
	static constexpr uint32_t kEpMax = (1u << kEpBits) - 1;
	static constexpr uint32_t kMany = (1u << 11) - 1;
	static constexpr unsigned kToolMemcheck = 1, kToolRacecheck = 2;

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
		// The frame, the lane, the argument copy, the loop's run and
		// globals are the simulator's: neither shared memory nor a harness
		// buffer, nothing the runtime would report. They get no test at
		// all (the thread loop reloads them for every thread).
		const Value *u = getUnderlyingObject(ptr);
		if (isa<AllocaInst>(u) || isa<Argument>(u) || isa<GlobalVariable>(u)) {
			nosan(&I);
			return false;
		}
		return true;
	}

	// The lane's store of thread index x (offset 0) where a thread of a
	// loop starts (Fission's publish), and the stores of y and z after it
	// in a loop over a block of several rows: the thread's rank, computed
	// there once for the accesses that follow.
	static Value *rankAt(StoreInst *S, Value *lane, Value *bx, Value *by)
	{
		Value *x = S->getValueOperand(), *y = nullptr, *z = nullptr;
		Instruction *last = S;
		for (Instruction *I = S->getNextNode(); I; I = I->getNextNode()) {
			auto *T = dyn_cast<StoreInst>(I);
			if (!T || !T->getMetadata(LLVMContext::MD_nosanitize))
				break;
			auto *G = dyn_cast<GetElementPtrInst>(T->getPointerOperand());
			auto *c = G && G->getPointerOperand() == lane && G->getNumIndices() == 1
			              ? dyn_cast<ConstantInt>(G->getOperand(1))
			              : nullptr;
			if (!c)
				break;
			if (c->getZExtValue() == 4)
				y = T->getValueOperand();
			else if (c->getZExtValue() == 8)
				z = T->getValueOperand();
			last = T;
		}
		IRBuilder<> b(last->getNextNode());
		auto zero = [](Value *v) {
			auto *c = dyn_cast<ConstantInt>(v);
			return c && c->isZero();
		};
		if (!y || !z || (zero(y) && zero(z)))
			return x; // (a one-row block's y and z stay 0 in the lane)
		return b.CreateAdd(x, b.CreateMul(bx, b.CreateAdd(y, b.CreateMul(by, z))));
	}

	// Loads from the argument copy and the thread's index block (the loop
	// form's first and third arguments: read-only, no other pointer to
	// them, dereferenceable) read the same value anywhere in the call:
	// they move to its entry, out of every thread loop.
	static void hoistInvariant(Function &F)
	{
		const DataLayout &DL = F.getParent()->getDataLayout();
		Instruction *at = &*F.getEntryBlock().getFirstInsertionPt();
		std::vector<LoadInst *> ls;
		for (Instruction &I : instructions(F))
			if (auto *L = dyn_cast<LoadInst>(&I))
				if (L->isSimple())
					ls.push_back(L);
		for (LoadInst *L : ls) {
			APInt off(64, 0);
			const Value *base =
			    L->getPointerOperand()->stripAndAccumulateInBoundsConstantOffsets(DL,
			                                                                      off);
			auto *A = dyn_cast<Argument>(base);
			if (!A || (A->getArgNo() != 0 && A->getArgNo() != 2) ||
			    !A->hasNoAliasAttr() || !A->onlyReadsMemory() || off.isNegative() ||
			    off.getZExtValue() + DL.getTypeStoreSize(L->getType()) >
			        A->getDereferenceableBytes() ||
			    L->getParent() == &F.getEntryBlock())
				continue;
			IRBuilder<> b(at);
			Value *ptr = b.CreateConstInBoundsGEP1_64(
			    b.getInt8Ty(), const_cast<Argument *>(A), off.getZExtValue());
			LoadInst *N = b.CreateLoad(L->getType(), ptr);
			N->setAlignment(
			    commonAlignment(A->getParamAlign().valueOrOne(), off.getZExtValue()));
			N->copyMetadata(*L);
			N->setDebugLoc(DebugLoc());
			L->replaceAllUsesWith(N);
			L->eraseFromParent();
		}
	}

	// ---- racecheck: regions whose accesses cannot race ----------------
	// racecheck's granule words decide only between accesses of one
	// barrier interval: a later one finds any older epoch "fresh". So in a
	// region whose shared accesses no two threads can make to the same
	// byte with one of them writing, the words need no update at all, and
	// what racecheck reports is the same with or without them. Such a
	// region's accesses keep their range test (one outside the declared
	// bytes still takes the shadow test and the runtime) and skip the rest.
	// The proof, over each region of the loop form (the code a call runs
	// for run->region):
	//  - an access whose pointer is a kernel argument's (a field of the
	//    argument copy: a harness buffer, never the block's shared memory,
	//    which CUDA allocates after the launch) or the engine's (run->uin
	//    and the other buffers of struct cta__kc_run) is not shared;
	//  - every other access is at U + S*X + c, one base U and one slot size
	//    S for the region, 0 <= c and c + size <= S, where X is the thread's
	//    rank T or T + K, K and U the same for every thread of the block
	//    (computed from the arguments, the block's indices, its uniform
	//    values and its shared variables' addresses); a region with no
	//    such write at all needs nothing more;
	//  - two accesses at T and T (any two threads: different slots), or at
	//    T + K and T + K, cannot meet; one at T and one at T + K cannot when
	//    the first is made only under T < K and T + K does not wrap (64-bit
	//    arithmetic, or a 32-bit K with its top bit clear and the second
	//    also under T < K): the first's slot is below K, the second's not.
	// One epoch runs one region of the block, except where threads wait at
	// different barriers (the engine then runs each thread on its own: a
	// call of one thread, which takes the full test) or at an mbarrier or a
	// work-stealing loop (a function that calls the engine for those gets
	// no skipped access). CTA_KC_VERBOSE=2 prints what each copy skips.
	struct RaceFree {
		Function &F;
		const DataLayout &DL;
		DominatorTree &DT;
		const std::map<Instruction *, Value *> &rankOf;
		const std::vector<StoreInst *> &pub; // the thread starts' lane stores
		LoopInfo LI;
		unsigned budget = 0;

		RaceFree(Function &f, DominatorTree &dt, const std::map<Instruction *, Value *> &r,
		         const std::vector<StoreInst *> &p)
		    : F(f), DL(f.getParent()->getDataLayout()), DT(dt), rankOf(r), pub(p), LI(dt)
		{
		}

		// Whether V is the same in every thread of the block in one epoch.
		bool uniform(Value *V, std::set<Value *> &open)
		{
			if (++budget > 4096)
				return false;
			if (isa<Constant>(V))
				return true;
			if (auto *A = dyn_cast<Argument>(V))
				return A->getArgNo() == 0 || A->getArgNo() == 2;
			auto *I = dyn_cast<Instruction>(V);
			if (!I)
				return false;
			if (open.count(I))
				return true; // (a cycle: decided by its other inputs)
			if (auto *L = dyn_cast<LoadInst>(I)) {
				if (!L->isSimple())
					return false;
				APInt off(64, 0);
				const Value *o =
				    L->getPointerOperand()->stripAndAccumulateConstantOffsets(
				        DL, off, true);
				// (The index block's first 12 bytes are a thread's.)
				if (auto *A = dyn_cast<Argument>(o))
					return A->getArgNo() == 0 ||
					       (A->getArgNo() == 2 && off.sge(12));
				return isUin(getUnderlyingObject(L->getPointerOperand()));
			}
			if (auto *CI = dyn_cast<CallInst>(I)) {
				Function *c = CI->getCalledFunction();
				return c && (c->getName() == "cta__shared" ||
				             c->getName() == "cta__shared_dynamic");
			}
			if (I->mayReadOrWriteMemory() || I->isTerminator())
				return false;
			// A phi is the same in every thread where what picks its
			// input is: none in a thread loop, and every branch between
			// its block and its immediate dominator on uniform values.
			if (auto *P = dyn_cast<PHINode>(I)) {
				for (Loop *L = LI.getLoopFor(P->getParent()); L;
				     L = L->getParentLoop())
					for (StoreInst *S : pub)
						if (L->contains(S))
							return false;
				open.insert(I);
				bool ok = picksUniform(P->getParent(), open);
				open.erase(I);
				if (!ok)
					return false;
			}
			open.insert(I);
			bool ok = true;
			for (Value *op : I->operands())
				if (!uniform(op, open)) {
					ok = false;
					break;
				}
			open.erase(I);
			return ok;
		}
		bool picksUniform(BasicBlock *B, std::set<Value *> &open)
		{
			DomTreeNode *N = DT.getNode(B);
			if (!N || !N->getIDom())
				return true;
			BasicBlock *D = N->getIDom()->getBlock();
			std::set<BasicBlock *> seen;
			std::vector<BasicBlock *> work{B, D};
			while (!work.empty()) {
				BasicBlock *X = work.back();
				work.pop_back();
				if (!seen.insert(X).second)
					continue;
				Instruction *t = X->getTerminator();
				if (auto *Br = dyn_cast<BranchInst>(t)) {
					if (Br->isConditional() &&
					    !uniform(Br->getCondition(), open))
						return false;
				} else if (auto *Sw = dyn_cast<SwitchInst>(t)) {
					if (!uniform(Sw->getCondition(), open))
						return false;
				} else if (!isa<ReturnInst>(t) && !isa<UnreachableInst>(t)) {
					return false;
				}
				if (X != D)
					for (BasicBlock *P : predecessors(X))
						work.push_back(P);
			}
			return true;
		}
		bool uniform(Value *V)
		{
			std::set<Value *> open;
			budget = 0;
			return uniform(V, open);
		}
		// run->uin (struct cta__kc_run's second field): the block's
		// uniform values, the same buffer for every call of an epoch.
		static bool isUin(const Value *o)
		{
			auto *L = dyn_cast<LoadInst>(o);
			if (!L)
				return false;
			APInt off(64, 0);
			const Value *b = L->getPointerOperand()->stripAndAccumulateConstantOffsets(
			    L->getModule()->getDataLayout(), off, true);
			auto *A = dyn_cast<Argument>(b);
			return A && A->getArgNo() == 3 && off == 8;
		}
		static Value *noZext(Value *V)
		{
			if (auto *Z = dyn_cast<ZExtInst>(V))
				return Z->getOperand(0);
			return V;
		}
		// V is the thread's rank T (or its zero extension, or the wider
		// loop counter T is truncated from).
		static bool isT(Value *V, Value *T)
		{
			if (V == T || noZext(V) == T)
				return true;
			auto *Tr = dyn_cast<TruncInst>(T);
			return Tr && Tr->getOperand(0) == V;
		}
		// Whether I runs only where T < K holds (a branch on it dominates I).
		bool under(Instruction *I, Value *T, Value *K)
		{
			DomTreeNode *N = DT.getNode(I->getParent());
			for (DomTreeNode *D = N ? N->getIDom() : nullptr; D; D = D->getIDom()) {
				auto *Br = dyn_cast<BranchInst>(D->getBlock()->getTerminator());
				if (!Br || !Br->isConditional())
					continue;
				for (unsigned s = 0; s < 2; s++) {
					BasicBlockEdge E(D->getBlock(), Br->getSuccessor(s));
					if (Br->getSuccessor(0) == Br->getSuccessor(1) ||
					    !DT.dominates(E, I->getParent()))
						continue;
					if (implies(Br->getCondition(), s == 0, T, K))
						return true;
				}
			}
			return false;
		}
		// Whether A and B never run in one epoch: a branch on a value the
		// same in every thread, taken once a thread (in no loop but the
		// thread loop), leads to A one way and to B the other.
		bool exclusive(Instruction *A, Instruction *B)
		{
			if (A == B)
				return false;
			DomTreeNode *N = DT.getNode(A->getParent());
			for (DomTreeNode *D = N ? N->getIDom() : nullptr; D; D = D->getIDom()) {
				auto *Br = dyn_cast<BranchInst>(D->getBlock()->getTerminator());
				if (!Br || !Br->isConditional() ||
				    Br->getSuccessor(0) == Br->getSuccessor(1))
					continue;
				if (Loop *L = LI.getLoopFor(D->getBlock())) {
					bool thr = false;
					for (StoreInst *S : pub)
						thr = thr || L->contains(S);
					if (!thr)
						continue;
				}
				for (unsigned s = 0; s < 2; s++)
					if (DT.dominates(
					        BasicBlockEdge(D->getBlock(), Br->getSuccessor(s)),
					        A->getParent()) &&
					    DT.dominates(BasicBlockEdge(D->getBlock(),
					                                Br->getSuccessor(1 - s)),
					                 B->getParent()) &&
					    uniform(Br->getCondition()))
						return true;
			}
			return false;
		}
		bool implies(Value *c, bool taken, Value *T, Value *K)
		{
			Value *a, *b;
			if (taken && match(c, m_LogicalAnd(m_Value(a), m_Value(b))))
				return implies(a, true, T, K) || implies(b, true, T, K);
			if (!taken && match(c, m_LogicalOr(m_Value(a), m_Value(b))))
				return implies(a, false, T, K) || implies(b, false, T, K);
			auto *C = dyn_cast<ICmpInst>(c);
			if (!C)
				return false;
			ICmpInst::Predicate p =
			    taken ? C->getPredicate() : C->getInversePredicate();
			Value *l = C->getOperand(0), *r = C->getOperand(1);
			if (p == ICmpInst::ICMP_UGT) {
				std::swap(l, r);
				p = ICmpInst::ICMP_ULT;
			}
			auto *cr = dyn_cast<ConstantInt>(noZext(r)),
			     *ck = dyn_cast<ConstantInt>(noZext(K));
			bool same = noZext(r) == noZext(K) || (cr && ck &&
			                                       cr->getValue().getZExtValue() ==
			                                           ck->getValue().getZExtValue());
			return p == ICmpInst::ICMP_ULT && isT(l, T) && same;
		}

		struct Acc {
			Instruction *I;
			bool write;
			uint64_t size, S;
			int64_t c;
			bool known;   // at one of the places below
			bool fixed;   // at U + c in every thread
			Value *T, *K; // else slot T + K (K null: T)
			bool noWrap;  // T + K computed without wrapping
		};
		// I's address as U + S*X + c, X the rank or rank + K; false if not.
		bool slot(Instruction *I, Value *ptr, Value *U, Acc &a)
		{
			Value *X = nullptr;
			a.c = 0;
			a.S = 0;
			for (Value *p = ptr; p != U;) {
				auto *G = dyn_cast<GEPOperator>(p);
				if (!G)
					return false;
				APInt off(DL.getIndexTypeSizeInBits(G->getType()), 0);
				if (G->accumulateConstantOffset(DL, off)) {
					a.c += off.getSExtValue();
				} else {
					if (X || G->getNumIndices() < 1 ||
					    isa<Constant>(G->getOperand(1)))
						return false;
					SmallVector<Value *, 4> rest;
					rest.push_back(
					    ConstantInt::get(G->getOperand(1)->getType(), 0));
					for (unsigned i = 2; i <= G->getNumIndices(); i++) {
						if (!isa<ConstantInt>(G->getOperand(i)))
							return false;
						rest.push_back(G->getOperand(i));
					}
					a.c += DL.getIndexedOffsetInType(G->getSourceElementType(),
					                                 rest);
					a.S = DL.getTypeAllocSize(G->getSourceElementType());
					X = G->getOperand(1);
				}
				p = G->getPointerOperand();
			}
			auto r = rankOf.find(I);
			a.fixed = !X;
			a.K = nullptr;
			if (!X)
				return true; // (one place for every thread)
			if (!a.S || r == rankOf.end())
				return false;
			a.T = r->second;
			a.noWrap = true;
			if (isT(X, a.T))
				return true;
			// T + K. Ranks are below 2^11 (the runtime's limit, T_BITS):
			// with K below half its width's range, T + K cannot wrap.
			Value *v = noZext(X), *l, *rr;
			if (!match(v, m_Add(m_Value(l), m_Value(rr))))
				return false;
			if (!isT(l, a.T))
				std::swap(l, rr);
			if (!isT(l, a.T) || !uniform(rr))
				return false;
			a.K = noZext(rr);
			a.noWrap = computeKnownBits(rr, DL).isNonNegative();
			return true;
		}

		static bool engineCallsOnly(Function &F)
		{
			for (Instruction &I : instructions(F))
				if (auto *CB = dyn_cast<CallBase>(&I)) {
					Function *c = CB->getCalledFunction();
					if (!c)
						return false;
					if (c->isIntrinsic())
						continue;
					StringRef n = c->getName();
					if (n != "cta__shared" && n != "cta__shared_dynamic" &&
					    n != "cta__kc_fis_scan" &&
					    n != "cta__kc_fis_mismatch" && n != "cta__spin_poll" &&
					    n != "cta__poll_thread" && n != "cta__kc_san_fence" &&
					    n != "memset" && n != "memcpy")
						return false;
				}
			return true;
		}

		// The accesses of acc whose granule words racecheck may skip.
		std::set<Instruction *> find(const std::vector<Instruction *> &acc,
		                             std::string &why)
		{
			std::set<Instruction *> out;
			if (!engineCallsOnly(F)) {
				why = "it calls the engine for waits";
				return out;
			}
			// The regions: what each case of the switch on run->region
			// reaches; what runs before the switch is in all of them.
			SwitchInst *sw = nullptr;
			for (Instruction &I : instructions(F))
				if (auto *S = dyn_cast<SwitchInst>(&I))
					if (auto *L = dyn_cast<LoadInst>(S->getCondition())) {
						APInt off(64, 0);
						const Value *b =
						    L->getPointerOperand()
						        ->stripAndAccumulateConstantOffsets(DL, off,
						                                            true);
						auto *A = dyn_cast<Argument>(b);
						if (A && A->getArgNo() == 3 &&
						    off == 80) // RF_REGION
							sw = S;
					}
			std::map<BasicBlock *, std::set<unsigned>> in;
			unsigned nreg = 1;
			if (sw) {
				nreg = sw->getNumSuccessors();
				for (unsigned r = 0; r < nreg; r++) {
					std::vector<BasicBlock *> work{sw->getSuccessor(r)};
					while (!work.empty()) {
						BasicBlock *B = work.back();
						work.pop_back();
						if (B == sw->getParent() || !in[B].insert(r).second)
							continue;
						for (BasicBlock *S : successors(B))
							work.push_back(S);
					}
				}
			}
			auto regionsOf = [&](Instruction *I) {
				auto it = in.find(I->getParent());
				if (!sw || it == in.end()) {
					std::set<unsigned> all;
					for (unsigned r = 0; r < nreg; r++)
						all.insert(r);
					return all;
				}
				return it->second;
			};
			std::vector<std::vector<Instruction *>> shared(nreg);
			for (Instruction *I : acc) {
				Value *p;
				Type *ty;
				bool w;
				wanted(*I, p, ty, w);
				const Value *u = getUnderlyingObject(p, 0);
				if (!simState(u))
					for (unsigned r : regionsOf(I))
						shared[r].push_back(I);
			}
			// Per region, each access against every other (and against
			// itself in another thread): it skips the words when no pair
			// with a write can meet, so every pair that can race keeps
			// both its tests.
			std::set<Instruction *> bad;
			for (unsigned r = 0; r < nreg; r++) {
				std::vector<Acc> as;
				Value *U = nullptr;
				for (Instruction *I : shared[r]) {
					Value *p;
					Type *ty;
					Acc a;
					a.I = I;
					wanted(*I, p, ty, a.write);
					a.size = DL.getTypeStoreSize(ty);
					Value *u = const_cast<Value *>(getUnderlyingObject(p, 0));
					if (!U && uniform(u))
						U = u;
					a.known = u == U && slot(I, p, U, a) &&
					          (a.fixed || (a.c >= 0 && a.c + (int64_t)a.size <=
					                                       (int64_t)a.S));
					as.push_back(a);
				}
				uint64_t S = 0;
				for (const Acc &a : as)
					if (a.known && !a.fixed)
						S = S ? S : a.S;
				for (size_t i = 0; i < as.size(); i++)
					for (size_t j = i; j < as.size(); j++)
						if (!pairOk(as[i], as[j], S)) {
							bad.insert(as[i].I);
							bad.insert(as[j].I);
						}
			}
			for (Instruction *I : acc)
				if (!bad.count(I))
					out.insert(I);
			why = std::to_string(nreg) + " regions";
			return out;
		}

		// Whether a and b (or a in two threads, when the same) can never
		// touch one byte in one epoch with one of them writing.
		bool pairOk(const Acc &a, const Acc &b, uint64_t S)
		{
			if (!a.write && !b.write)
				return true;
			if (exclusive(a.I, b.I))
				return true;
			if (!a.known || !b.known || a.fixed || b.fixed || a.S != S || b.S != S)
				return false;
			if (a.K == b.K)
				return true; // (one slot per thread)
			if (a.K && b.K)
				return false;
			const Acc &t = a.K ? b : a, &k = a.K ? a : b;
			return k.noWrap && under(t.I, t.T, k.K);
		}

		// What points at the simulator's own memory, never shared memory:
		// a field of the argument copy (a harness buffer: CUDA allocates
		// shared memory after the launch), the engine's run buffers
		// (struct cta__kc_run), the lane (cta__cur).
		static bool simState(const Value *u)
		{
			if (auto *II = dyn_cast<IntrinsicInst>(u))
				return II->getIntrinsicID() == Intrinsic::threadlocal_address;
			auto *L = dyn_cast<LoadInst>(u);
			if (!L)
				return false;
			const Value *o = getUnderlyingObject(L->getPointerOperand(), 0);
			if (auto *A = dyn_cast<Argument>(o))
				return A->getArgNo() == 0 || A->getArgNo() == 3;
			if (auto *II = dyn_cast<IntrinsicInst>(o))
				if (II->getIntrinsicID() == Intrinsic::threadlocal_address)
					if (auto *G =
					        dyn_cast<GlobalVariable>(II->getArgOperand(0)))
						return G->getName() == "cta__cur";
			return false;
		}
	};

	// Instruments F, a copy of the loop form for one tool (1 memcheck, 2
	// racecheck, 3 initcheck), whose last argument is what
	// cta__san_region returned: the copy tests only what its tool needs.
	static void instrument(Function &F, unsigned toolId)
	{
		Module &M = *F.getParent();
		LLVMContext &C = F.getContext();
		const DataLayout &DL = M.getDataLayout();
		Type *i8 = Type::getInt8Ty(C), *i16 = Type::getInt16Ty(C);
		Type *i32 = Type::getInt32Ty(C), *i64 = Type::getInt64Ty(C);
		PointerType *ptrT = PointerType::getUnqual(C);
		Value *lane = F.getArg(1);
		std::vector<Instruction *> acc;
		std::vector<StoreInst *> pub;
		for (Instruction &I : instructions(F)) {
			Value *p;
			Type *t;
			bool w;
			if (wanted(I, p, t, w))
				acc.push_back(&I);
			else if (auto *S = dyn_cast<StoreInst>(&I))
				if (S->getMetadata(LLVMContext::MD_nosanitize) &&
				    S->getPointerOperand() == lane &&
				    S->getValueOperand()->getType() == i32)
					pub.push_back(S);
		}
		if (acc.empty())
			return;
		FunctionCallee slowFn =
		    M.getOrInsertFunction("cta__san_slow", Type::getVoidTy(C), i64, i64, ptrT);
		IRBuilder<> e(&*F.getEntryBlock().getFirstInsertionPt());
		Value *fs = F.getArg(F.arg_size() - 1);
		const bool isMc = toolId == kToolMemcheck, isRc = toolId == kToolRacecheck;
		auto field = [&](Type *t, unsigned off) {
			LoadInst *L = e.CreateLoad(t, e.CreateConstInBoundsGEP1_64(i8, fs, off));
			nosan(L);
			return L;
		};
		Value *smem = field(i64, 0), *cap = field(i64, 8), *g = field(ptrT, 16);
		Value *shadow = field(i64, 24), *ep = field(i32, 32), *base = field(i32, 36);
		Value *span = e.CreateSub(ep, base); // initcheck: written in this block
		// initcheck: the leading bytes the block's first region writes
		// whole, which need no test (struct cta__san_fast's free)
		Value *freeB = !isMc && !isRc ? field(i64, 48) : nullptr;
		auto laneField = [&](IRBuilder<> &b, unsigned off) {
			LoadInst *L =
			    b.CreateLoad(i32, b.CreateConstInBoundsGEP1_64(i8, lane, off));
			nosan(L);
			return L;
		};
		Value *bx = laneField(e, 24), *by = laneField(e, 28);
		// Each access's thread: the rank of the thread start that
		// dominates it (the nearest), else read from the lane there.
		DominatorTree DT(F);
		std::vector<std::pair<StoreInst *, Value *>> ranks;
		for (StoreInst *S : pub)
			ranks.push_back({S, rankAt(S, lane, bx, by)});
		std::map<Instruction *, Value *> rankOf;
		for (Instruction *I : acc) {
			StoreInst *best = nullptr;
			for (auto &r : ranks)
				if (DT.dominates(r.first, I) &&
				    (!best || DT.dominates(best, r.first))) {
					best = r.first;
					rankOf[I] = r.second;
				}
		}
		// racecheck: the accesses of regions where no two threads meet
		// (RaceFree) skip the granule words in a call of several threads.
		std::set<Instruction *> skip;
		Value *several = nullptr;
		if (isRc) {
			std::string why;
			skip = RaceFree(F, DT, rankOf, pub).find(acc, why);
			const char *v = std::getenv("CTA_KC_VERBOSE");
			if (v && std::string(v) == "2")
				errs() << "ctasim-kc: " << F.getName()
				       << ": racecheck skips the words of " << skip.size() << " of "
				       << acc.size() << " accesses (" << why << ")\n";
			if (!skip.empty()) {
				Value *run = F.getArg(3);
				auto rf = [&](unsigned off) {
					LoadInst *L = e.CreateLoad(
					    i64, e.CreateConstInBoundsGEP1_64(i8, run, off));
					nosan(L);
					return L;
				};
				Value *n1 = e.CreateSub(rf(72), rf(64)),
				      *n2 = e.CreateSub(rf(136), rf(128));
				several = e.CreateICmpUGT(e.CreateAdd(n1, n2), e.getInt64(1));
			}
		}
		{
			std::string why;
			unsigned made = versionLoops(F, skip, several, why);
			if (std::getenv("CTA_KC_VERBOSE"))
				errs() << "ctasim-kc: " << F.getName() << ": " << made
				       << " thread loops with an untested copy"
				       << (why.empty() ? "" : " (not all: " + why + ")") << "\n";
		}
		Value *epMask = ConstantInt::get(i32, kEpMax);
		Value *many = e.CreateOr(ep, e.getInt32(kMany << kEpBits));
		for (Instruction *I : acc) {
			Value *p;
			Type *ty;
			bool write;
			wanted(*I, p, ty, write);
			uint64_t n = DL.getTypeStoreSize(ty);
			Align al = isa<LoadInst>(I) ? cast<LoadInst>(I)->getAlign()
			                            : cast<StoreInst>(I)->getAlign();
			// The kernel-address pass leaves it to the tests below.
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
			auto block = [&](const char *name) {
				return BasicBlock::Create(C, name, &F, cont);
			};
			BasicBlock *chk = block("san.chk"), *asan = block("san.asan");
			BasicBlock *slow = block("san.slow");
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
			// memcheck: the declared bytes below cap are valid (past
			// them, the kernel-address test knows where they end).
			if (isMc) {
				b.CreateCondBr(
				    b.CreateICmpULE(b.CreateAdd(off, b.getInt64(n)), cap), cont,
				    asan);
				continue;
			}
			if (freeB) {
				BasicBlock *words = block("san.words");
				b.CreateCondBr(
				    b.CreateICmpULE(b.CreateAdd(off, b.getInt64(n)), freeB), cont,
				    words);
				b.SetInsertPoint(words);
			}
			if (skip.count(I)) {
				BasicBlock *words = block("san.words");
				b.CreateCondBr(several, cont, words);
				b.SetInsertPoint(words);
			}
			if (n != 8) {
				b.CreateBr(slow);
				continue;
			}
			if (al.value() < 8) {
				BasicBlock *al8 = block("san.al8");
				b.CreateCondBr(
				    b.CreateICmpEQ(b.CreateAnd(off, b.getInt64(7)), b.getInt64(0)),
				    al8, slow);
				b.SetInsertPoint(al8);
			}
			Value *gptr = b.CreateInBoundsGEP(i64, g, b.CreateLShr(off, b.getInt64(3)));
			LoadInst *G = b.CreateLoad(i64, gptr);
			nosan(G);
			Value *lo = b.CreateTrunc(G, i32);
			Value *gep = b.CreateAnd(lo, epMask);
			// initcheck: a write marks the granule written in this epoch;
			// a read must find it written in this block. (A granule's epoch
			// is at most the current one; a split granule's, EP_MAX, above.)
			if (!isRc && write) {
				BasicBlock *upd = block("san.icw");
				b.CreateCondBr(b.CreateICmpULE(gep, ep), upd, slow);
				b.SetInsertPoint(upd);
				nosan(b.CreateStore(b.CreateZExt(ep, i64), gptr));
				b.CreateBr(cont);
			} else if (!isRc) {
				b.CreateCondBr(b.CreateICmpULE(b.CreateSub(gep, base), span), cont,
				               slow);
			}
			if (!isRc)
				continue;
			// racecheck (the granule layout of sim/sanitize/sanitize.c):
			// another epoch's (older: a split granule's is not), or this
			// thread's own in this one; a read may also follow other
			// threads' reads.
			Value *rank;
			auto rk = rankOf.find(I);
			if (rk != rankOf.end()) {
				rank = rk->second;
			} else {
				Value *tx = laneField(b, 0), *ty2 = laneField(b, 4),
				      *tz = laneField(b, 8);
				rank = b.CreateAdd(
				    tx, b.CreateMul(bx, b.CreateAdd(ty2, b.CreateMul(by, tz))));
			}
			Value *mine = b.CreateOr(ep, b.CreateShl(rank, kEpBits));
			LoadInst *sid = b.CreateLoad(i32, site);
			nosan(sid);
			Value *pc = b.CreateShl(b.CreateZExt(sid, i64), 48);
			Value *wbit = b.getInt64(write ? 1ull << 32 : 0);
			// (Here: it must dominate both uses below.)
			Value *wrote = b.CreateAnd(G, b.getInt64(1ull << 32));
			BasicBlock *known = block("san.rck"), *own = block("san.own");
			BasicBlock *other = block("san.oth"), *fresh = block("san.new");
			b.CreateCondBr(b.CreateICmpNE(sid, b.getInt32(0)), known, slow);
			b.SetInsertPoint(known);
			b.CreateCondBr(b.CreateICmpEQ(lo, mine), own, other);
			b.SetInsertPoint(other);
			if (write) {
				b.CreateCondBr(b.CreateICmpULT(gep, ep), fresh, slow);
			} else {
				BasicBlock *o2 = block("san.oth2"), *rd = block("san.many");
				b.CreateCondBr(b.CreateICmpULT(gep, ep), fresh, o2);
				// Another thread's read in this epoch (a split granule has
				// the written bit).
				b.SetInsertPoint(o2);
				b.CreateCondBr(b.CreateICmpEQ(wrote, b.getInt64(0)), rd, slow);
				b.SetInsertPoint(rd);
				nosan(b.CreateStore(b.CreateOr(b.CreateZExt(many, i64), pc), gptr));
				b.CreateBr(cont);
			}
			b.SetInsertPoint(fresh);
			nosan(b.CreateStore(
			    b.CreateOr(b.CreateOr(b.CreateZExt(mine, i64), pc), wbit), gptr));
			b.CreateBr(cont);
			// Its own: a read after its write keeps the write as the other
			// side of a later race.
			b.SetInsertPoint(own);
			if (write) {
				b.CreateBr(fresh);
			} else {
				b.CreateCondBr(b.CreateICmpEQ(wrote, b.getInt64(0)), fresh, cont);
			}
		}
	}

	// ---- thread loops that need no test ---------------------------------
	// A thread loop of a tool's copy runs a copy of itself without tests
	// where, for the threads of this run, none of its tests would call the
	// runtime or change its state: each load and store of the loop is at an
	// address the same in every thread or affine in the thread index (as
	// for SanProbePass's spans, compiler/san_probe.h), or inside the
	// body's own loop that each thread enters at most once (a grid-stride
	// loop where the grid covers the data, as OneTripPass finds it: tested
	// before the loop, then the access is its first trip's), and the
	// runtime (cta__san_span) finds every access's range [first, last +
	// size) clear: a clear shadow, or for racecheck and initcheck the
	// declared shared bytes where the access would take no word (racecheck:
	// an access RaceFree skips in a call of several threads; initcheck: a
	// read below `free`, or a write of whole granules that the block's
	// first region writes whole, whose words the runtime sets as the tested
	// write would). A guarded access only widens its range. Accesses
	// outside thread loops keep their tests; so does a loop with an atomic,
	// a call that may touch memory other than a declared function's, or an
	// access of another form. The test runs where each run of threads
	// starts (lo .. hi, then lo2 .. hi2), with the values that run has.
	static bool verbose2()
	{
		const char *v = std::getenv("CTA_KC_VERBOSE");
		return v && std::string(v) == "2";
	}
	struct Span2 {
		const SCEV *first, *last;
		uint64_t size;
		bool write, skip;
	};
	// IL (a loop of the body's inside thread loop L) makes at most one
	// trip in every thread of the run where the conditions added to conds
	// hold: its back edge is taken while iv + St < N (unsigned, 64 bits),
	// iv starting at S(t), which steps by c >= 0 with the thread; then
	// S(lo) + St >= N without wrapping (S(lo) <= S(last) and S(last) + St
	// <= 2^64 - 1) sends every thread out after its first trip.
	static bool oneTrip(Loop *IL, Loop *L, ScalarEvolution &SE, const SCEV *btc,
	                    std::vector<SanProbePass::Cond> &conds)
	{
		BasicBlock *IH = IL->getHeader(), *IPre = IL->getLoopPreheader(),
		           *ILt = IL->getLoopLatch();
		if (!IL->isInnermost() || IL->getParentLoop() != L || !IPre || !ILt ||
		    IL->getExitingBlock() != ILt)
			return false;
		Value *next = nullptr, *N = nullptr;
		bool sgn = false;
		if (!OneTripPass::lt(dyn_cast<BranchInst>(ILt->getTerminator()), IH, next, N,
		                     sgn) ||
		    sgn)
			return false;
		auto *nx = dyn_cast<BinaryOperator>(next);
		if (!nx || nx->getOpcode() != Instruction::Add || !nx->getType()->isIntegerTy(64))
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
		if (!iv)
			return false;
		const SCEV *sN = SE.getSCEV(N), *sSt = SE.getSCEV(St);
		if (!SE.isLoopInvariant(sN, L) || !SE.isLoopInvariant(sSt, L))
			return false;
		const SCEV *S = SE.getSCEV(iv->getIncomingValueForBlock(IPre));
		const SCEV *S0 = S, *S1 = S;
		if (!SE.isLoopInvariant(S, L)) {
			auto *AR = dyn_cast<SCEVAddRecExpr>(S);
			auto *c = AR ? dyn_cast<SCEVConstant>(AR->getStepRecurrence(SE)) : nullptr;
			if (!AR || AR->getLoop() != L || !AR->isAffine() || !c ||
			    c->getAPInt().isNegative() || !SE.isLoopInvariant(AR->getStart(), L))
				return false;
			S0 = AR->getStart();
			S1 = AR->evaluateAtIteration(SE.getTruncateOrZeroExtend(btc, S->getType()),
			                             SE);
			conds.push_back({S0, CmpInst::ICMP_ULE, S1});
		}
		conds.push_back(
		    {S1, CmpInst::ICMP_ULE, SE.getMinusSCEV(SE.getMinusOne(S->getType()), sSt)});
		conds.push_back({SE.getAddExpr(S0, sSt), CmpInst::ICMP_UGE, sN});
		return true;
	}
	// The ranges of L's accesses, or false (why says what stopped it).
	static bool loopSpans(Loop *L, LoopInfo &LI, ScalarEvolution &SE, const DataLayout &DL,
	                      const std::set<Instruction *> &skip, std::vector<Span2> &out,
	                      std::vector<SanProbePass::Cond> &conds, std::set<Loop *> &once,
	                      std::string &why)
	{
		const SCEV *btc = SE.getBackedgeTakenCount(L);
		if (isa<SCEVCouldNotCompute>(btc) || SE.getTypeSizeInBits(btc->getType()) > 64) {
			why = "the thread loop's trip count is not known";
			return false;
		}
		conds.push_back({btc, CmpInst::ICMP_ULT, SE.getConstant(btc->getType(), 1u << 20)});
		SanProbePass::Widen wide(SE, L, btc, conds);
		for (BasicBlock *BB : L->blocks()) {
			Loop *in = LI.getLoopFor(BB);
			if (in != L && !once.count(in)) {
				if (!oneTrip(in, L, SE, btc, conds)) {
					why = "a loop inside that may make more than one trip";
					return false;
				}
				once.insert(in);
			}
			for (Instruction &I : *BB) {
				if (auto *CB = dyn_cast<CallBase>(&I)) {
					auto *II = dyn_cast<IntrinsicInst>(CB);
					if (II && (isa<DbgInfoIntrinsic>(II) ||
					           II->isLifetimeStartOrEnd() ||
					           !II->mayReadOrWriteMemory()))
						continue;
					// (The runtime's functions: the same call in both
					// copies, instrumented in neither.)
					Function *c = CB->getCalledFunction();
					if (!II && c && c->isDeclaration() && !CB->isInlineAsm())
						continue;
					why = "a call";
					return false;
				}
				if (!I.mayReadOrWriteMemory())
					continue;
				if (I.getMetadata(LLVMContext::MD_nosanitize))
					continue; // (the simulator's: never tested)
				Value *ptr;
				Type *ty;
				bool write;
				if (!isa<LoadInst>(I) && !isa<StoreInst>(I)) {
					why = "an access that is neither a load nor a store";
					return false;
				}
				if (!wanted(I, ptr, ty, write)) {
					if (I.getMetadata(LLVMContext::MD_nosanitize))
						continue;
					why = "an atomic access";
					return false;
				}
				const uint64_t size = DL.getTypeStoreSize(ty).getFixedValue();
				const SCEV *S = wide.visit(SE.getSCEV(ptr));
				if (in != L) {
					// (Its first trip, the only one.)
					if (auto *AR = dyn_cast<SCEVAddRecExpr>(S))
						if (AR->getLoop() == in)
							S = AR->getStart();
					if (!SE.isLoopInvariant(S, in)) {
						why =
						    "an access of the loop inside not affine in it";
						return false;
					}
				}
				const SCEV *first = S, *last = S;
				if (!SE.isLoopInvariant(S, L)) {
					auto *AR = dyn_cast<SCEVAddRecExpr>(S);
					auto *step =
					    AR ? dyn_cast<SCEVConstant>(AR->getStepRecurrence(SE))
					       : nullptr;
					if (!AR || AR->getLoop() != L || !AR->isAffine() ||
					    !SE.isLoopInvariant(AR->getStart(), L) || !step ||
					    step->getAPInt().abs().ugt(1u << 30)) {
						why = "an access not affine in the thread index";
						return false;
					}
					const SCEV *end = AR->evaluateAtIteration(
					    SE.getTruncateOrZeroExtend(
					        btc, AR->getType()->isPointerTy()
					                 ? DL.getIntPtrType(AR->getType())
					                 : AR->getType()),
					    SE);
					first = AR->getStart();
					last = end;
					if (step->getAPInt().isNegative())
						std::swap(first, last);
				}
				const bool sk = skip.count(&I) != 0;
				bool dup = false;
				for (Span2 &o : out)
					if (o.first == first && o.last == last && o.size == size) {
						o.write = o.write || write;
						o.skip = o.skip && sk;
						dup = true;
						break;
					}
				if (!dup)
					out.push_back({first, last, size, write, sk});
			}
		}
		return true;
	}
	// Versions each thread loop of a tool's copy (before its tests are
	// placed): the loop as it is, and a copy whose accesses are marked
	// untested, taken where cta__san_span clears every range. several: a
	// call of more than one thread (racecheck's skip needs it), or null.
	static unsigned versionLoops(Function &F, const std::set<Instruction *> &skip,
	                             Value *several, std::string &why)
	{
		Module &M = *F.getParent();
		LLVMContext &C = F.getContext();
		const DataLayout &DL = M.getDataLayout();
		Type *i32 = Type::getInt32Ty(C), *i64 = Type::getInt64Ty(C);
		PointerType *ptrT = PointerType::getUnqual(C);
		FunctionCallee spanFn =
		    M.getOrInsertFunction("cta__san_span", i32, ptrT, ptrT, ptrT, ptrT, i64);
		Value *fs = F.getArg(F.arg_size() - 1), *lane = F.getArg(1);
		TargetLibraryInfoImpl TLII(Triple(M.getTargetTriple()));
		TargetLibraryInfo TLI(TLII, &F);
		std::set<BasicBlock *> tried;
		unsigned made = 0;
		for (int round = 0; round < 64; round++) {
			DominatorTree DT(F);
			LoopInfo LI(DT);
			AssumptionCache AC(F);
			ScalarEvolution SE(F, TLI, AC, DT, LI);
			Loop *L = nullptr;
			for (Loop *X : LI.getLoopsInPreorder()) {
				if (!OneTripPass::isThread(X) || tried.count(X->getHeader()))
					continue;
				bool inner = false;
				for (Loop *P = X->getParentLoop(); P; P = P->getParentLoop())
					inner = inner || OneTripPass::isThread(P);
				if (!inner) {
					L = X;
					break;
				}
			}
			if (!L)
				break;
			tried.insert(L->getHeader());
			simplifyLoop(L, &DT, &LI, &SE, &AC, nullptr, false);
			formLCSSARecursively(*L, DT, &LI, &SE);
			BasicBlock *Pre = L->getLoopPreheader();
			SmallVector<BasicBlock *, 4> exits;
			L->getExitBlocks(exits);
			if (!Pre || !L->hasDedicatedExits() ||
			    !isa<BranchInst>(Pre->getTerminator()) ||
			    cast<BranchInst>(Pre->getTerminator())->isConditional()) {
				why = "a thread loop not in simplified form";
				continue;
			}
			std::vector<Span2> sp;
			std::vector<SanProbePass::Cond> cs;
			std::set<Loop *> once;
			std::string w;
			if (!loopSpans(L, LI, SE, DL, skip, sp, cs, once, w)) {
				why = w;
				if (verbose2())
					errs() << "ctasim-kc: " << F.getName() << ": "
					       << L->getHeader()->getName() << " keeps its tests ("
					       << w << ")\n";
				continue;
			}
			Instruction *at = Pre->getTerminator();
			SCEVExpander ex(SE, DL, "san.span");
			bool safe = true;
			for (const Span2 &s : sp)
				safe = safe && ex.isSafeToExpandAt(s.first, at) &&
				       ex.isSafeToExpandAt(s.last, at);
			for (const SanProbePass::Cond &c : cs)
				safe = safe && ex.isSafeToExpandAt(c.lhs, at) &&
				       ex.isSafeToExpandAt(c.rhs, at);
			if (!safe) {
				why = "an address not known before the thread loop";
				continue;
			}
			// The test, where the run starts.
			std::vector<Value *> tests;
			for (const SanProbePass::Cond &c : cs) {
				Value *l = ex.expandCodeFor(c.lhs, c.lhs->getType(), at);
				Value *r = ex.expandCodeFor(c.rhs, c.lhs->getType(), at);
				tests.push_back(IRBuilder<>(at).CreateICmp(c.pred, l, r));
			}
			std::vector<std::pair<Value *, Value *>> ends;
			for (const Span2 &s : sp)
				ends.push_back({ex.expandCodeFor(s.first, ptrT, at),
				                ex.expandCodeFor(s.last, ptrT, at)});
			IRBuilder<> b(at);
			Value *ok = b.getTrue();
			for (Value *t : tests)
				ok = b.CreateAnd(ok, t);
			// (Each call only where the ones before passed: initcheck's
			// sets words.)
			BasicBlock *H = L->getHeader();
			BasicBlock *cur = Pre;
			for (size_t i = 0; i < sp.size(); i++) {
				uint64_t k = sp[i].size << 2 | (sp[i].write ? 1 : 0);
				Value *kind = b.getInt64(k);
				if (sp[i].skip && several)
					kind =
					    b.CreateOr(kind, b.CreateSelect(several, b.getInt64(2),
					                                    b.getInt64(0)));
				BasicBlock *nb = BasicBlock::Create(C, "san.span", &F, H);
				b.CreateCondBr(ok, nb, H);
				if (cur == Pre)
					at->eraseFromParent();
				b.SetInsertPoint(nb);
				b.SetCurrentDebugLocation(DebugLoc());
				CallInst *call = b.CreateCall(
				    spanFn, {fs, lane, ends[i].first, ends[i].second, kind});
				if (DISubprogram *SP = F.getSubprogram())
					call->setDebugLoc(DILocation::get(C, SP->getLine(), 0, SP));
				ok = b.CreateICmpNE(call, b.getInt32(0));
				cur = nb;
			}
			// The copy, untested.
			ValueToValueMapTy vm;
			SmallVector<BasicBlock *, 16> copies;
			for (BasicBlock *bb : L->blocks()) {
				BasicBlock *c = CloneBasicBlock(bb, vm, ".nt", &F);
				vm[bb] = c;
				copies.push_back(c);
			}
			for (BasicBlock *c : copies)
				for (Instruction &I : *c) {
					RemapInstruction(&I, vm,
					                 RF_NoModuleLevelChanges |
					                     RF_IgnoreMissingLocals);
					if (isa<LoadInst>(I) || isa<StoreInst>(I))
						nosan(&I);
				}
			for (BasicBlock *E : exits)
				for (PHINode &X : E->phis())
					for (unsigned i = 0, n = X.getNumIncomingValues(); i < n;
					     i++) {
						BasicBlock *in = X.getIncomingBlock(i);
						if (!L->contains(in))
							continue;
						Value *v = X.getIncomingValue(i);
						Value *m = vm.lookup(v);
						X.addIncoming(m ? m : v, cast<BasicBlock>(vm[in]));
					}
			// A loop inside makes one trip where the copy runs: its back
			// edge goes (as OneTripPass's copy).
			for (Loop *IL : once) {
				auto *ILt2 = cast<BasicBlock>(vm[IL->getLoopLatch()]);
				auto *IH2 = cast<BasicBlock>(vm[IL->getHeader()]);
				BasicBlock *IE = IL->getExitBlock();
				if (!IE || !L->contains(IE))
					continue;
				auto *IE2 = cast<BasicBlock>(vm[IE]);
				IH2->removePredecessor(ILt2);
				Instruction *t2 = ILt2->getTerminator();
				BranchInst::Create(IE2, t2);
				t2->eraseFromParent();
			}
			BasicBlock *H2 = cast<BasicBlock>(vm[H]);
			BasicBlock *Lt2 = cast<BasicBlock>(vm[L->getLoopLatch()]);
			if (MDNode *old = L->getLoopLatch()->getTerminator()->getMetadata(
			        LLVMContext::MD_loop)) {
				SmallVector<Metadata *, 4> ops{nullptr};
				for (unsigned i = 1; i < old->getNumOperands(); i++)
					ops.push_back(old->getOperand(i));
				MDNode *md = MDNode::getDistinct(C, ops);
				md->replaceOperandWith(0, md);
				Lt2->getTerminator()->setMetadata(LLVMContext::MD_loop, md);
			}
			tried.insert(H2);
			b.CreateCondBr(ok, H2, H);
			if (cur == Pre)
				at->eraseFromParent();
			// H's phis take their entry values from Pre: the copy's, from
			// the last test's block; the original's, from each test's.
			for (PHINode &P : H2->phis())
				P.setIncomingBlock(P.getBasicBlockIndex(Pre), cur);
			if (cur != Pre)
				for (PHINode &P : H->phis()) {
					Value *v = P.getIncomingValueForBlock(Pre);
					for (BasicBlock *tb : predecessors(H))
						if (tb != Pre && !L->contains(tb) &&
						    P.getBasicBlockIndex(tb) < 0)
							P.addIncoming(v, tb);
				}
			made++;
			if (verbose2())
				errs() << "ctasim-kc: " << F.getName() << ": " << H->getName()
				       << " has an untested copy (" << sp.size() << " ranges, "
				       << cs.size() << " conditions)\n";
		}
		return made;
	}

	// One copy of F's code per tool, each tested for its tool alone
	// (racecheck's copy holds no initcheck test and memcheck's no granule
	// word): F keeps its name and arguments, asks the runtime for the
	// block's state (cta__san_region) and calls its tool's copy with it.
	// Without a tool's state (no block) every copy takes the
	// kernel-address test alone; initcheck's runs.
	static void specialise(Function &F)
	{
		Module &M = *F.getParent();
		LLVMContext &C = F.getContext();
		PointerType *ptrT = PointerType::getUnqual(C);
		std::vector<Type *> params(F.getFunctionType()->param_begin(),
		                           F.getFunctionType()->param_end());
		params.push_back(ptrT);
		FunctionType *FT = FunctionType::get(F.getReturnType(), params, false);
		static const char *const names[4] = {"", ".memcheck", ".racecheck", ".initcheck"};
		Function *copy[4] = {};
		for (unsigned t = kToolMemcheck; t <= 3; t++) {
			Function *N = Function::Create(FT, GlobalValue::InternalLinkage,
			                               F.getName() + names[t], &M);
			ValueToValueMapTy VM;
			for (unsigned i = 0; i < F.arg_size(); i++) {
				VM[F.getArg(i)] = N->getArg(i);
				N->getArg(i)->setName(F.getArg(i)->getName());
			}
			SmallVector<ReturnInst *, 4> rets;
			CloneFunctionInto(N, &F, VM, CloneFunctionChangeType::LocalChangesOnly,
			                  rets);
			N->addFnAttr(Attribute::NoInline);
			instrument(*N, t);
			copy[t] = N;
		}
		// F: the dispatch.
		F.dropAllReferences();
		while (!F.empty())
			F.begin()->eraseFromParent();
		BasicBlock *E = BasicBlock::Create(C, "entry", &F);
		IRBuilder<> b(E);
		DebugLoc dl;
		if (DISubprogram *SP = F.getSubprogram())
			dl = DILocation::get(C, SP->getLine(), 0, SP);
		FunctionCallee regionFn = M.getOrInsertFunction("cta__san_region", ptrT, ptrT);
		CallInst *fs = b.CreateCall(regionFn, {F.getArg(1)});
		fs->setDebugLoc(dl);
		LoadInst *tool = b.CreateLoad(b.getInt32Ty(),
		                              b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), fs, 40));
		nosan(tool);
		std::vector<Value *> args;
		for (Argument &A : F.args())
			args.push_back(&A);
		args.push_back(fs);
		BasicBlock *bb[4];
		for (unsigned t = kToolMemcheck; t <= 3; t++) {
			bb[t] = BasicBlock::Create(C, names[t] + 1, &F);
			IRBuilder<> c(bb[t]);
			CallInst *CI = c.CreateCall(copy[t], args);
			CI->setDebugLoc(dl);
			c.CreateRetVoid();
		}
		SwitchInst *sw = b.CreateSwitch(tool, bb[3], 2);
		sw->addCase(b.getInt32(kToolMemcheck), bb[kToolMemcheck]);
		sw->addCase(b.getInt32(kToolRacecheck), bb[kToolRacecheck]);
	}

	// The kernel-address pass gives each report call its access's place,
	// and the verifier rejects a call without one to a function with debug
	// information (clang_entry.h's report builtins have it): the module's
	// debug information would then be dropped whole, and every report
	// lose its line. Accesses the optimisations made without a place (a
	// load hoisted or merged by them) take the nearest place before them in
	// their block, else after, else the function's own line.
	static bool placeAccesses(Function &F)
	{
		DISubprogram *SP = F.getSubprogram();
		if (!SP)
			return false;
		bool changed = false;
		for (BasicBlock &BB : F) {
			DebugLoc prev;
			std::vector<Instruction *> wait;
			for (Instruction &I : BB) {
				if (I.getDebugLoc() && !isa<DbgInfoIntrinsic>(I)) {
					prev = I.getDebugLoc();
					for (Instruction *W : wait)
						W->setDebugLoc(prev);
					wait.clear();
					continue;
				}
				if (!isa<LoadInst>(I) && !isa<StoreInst>(I) &&
				    !isa<AtomicRMWInst>(I) && !isa<AtomicCmpXchgInst>(I) &&
				    !isa<MemIntrinsic>(I))
					continue;
				changed = true;
				if (prev)
					I.setDebugLoc(prev);
				else
					wait.push_back(&I);
			}
			for (Instruction *W : wait)
				W->setDebugLoc(
				    DILocation::get(F.getContext(), SP->getLine(), 0, SP));
		}
		return changed;
	}

	PreservedAnalyses run(Module &M, ModuleAnalysisManager &MAM)
	{
		if (!M.getNamedGlobal("cta__kc_sanitized"))
			return PreservedAnalyses::all();
		bool changed = false;
		for (Function &F : M)
			if (!F.isDeclaration())
				changed = placeAccesses(F) || changed;
		// The fences between threads (Fission's publish) did their work:
		// the optimisations are over, and each access below is tested
		// where it is.
		if (Function *fence = M.getFunction("cta__kc_san_fence")) {
			std::vector<CallInst *> calls;
			for (User *u : fence->users())
				if (auto *CI = dyn_cast<CallInst>(u))
					calls.push_back(CI);
			for (CallInst *CI : calls)
				CI->eraseFromParent();
			changed = true;
		}
		std::vector<Function *> fis;
		for (Function &F : M)
			if (!F.isDeclaration() && F.getName().endswith("__kc_fis") &&
			    F.arg_size() >= 2)
				fis.push_back(&F);
		auto &FAM = MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
		static const char *const tools[3] = {".memcheck", ".racecheck", ".initcheck"};
		for (Function *F : fis) {
			hoistInvariant(*F);
			specialise(*F);
			changed = true;
			// The optimisations ran before the tests were placed (the fences
			// kept each thread's accesses its own); the tests' own
			// loop-invariant work, and what the fences kept in the thread
			// loops (cta_spin_ns's cost from the argument copy), leave the
			// loops now. The tests' calls keep every store a thread makes
			// to the lane in its loop.
			for (const char *t : tools)
				if (Function *G = M.getFunction((F->getName() + t).str())) {
					FAM.invalidate(*G, PreservedAnalyses::none());
					FunctionPassManager FPM;
					FPM.addPass(createFunctionToLoopPassAdaptor(
					    LICMPass(LICMOptions()), /*UseMemorySSA=*/true));
					FPM.run(*G, FAM);
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
