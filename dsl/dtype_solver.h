// Element-type inference for the "a rewrite changes an output's type" check: type variables
// with a set of possible element types each, unified through ops' type constraints (union-find).
#pragma once
#include <vector>

#include "dsl/op_catalog.h"

namespace fusor::dsl {

class DTypeSolver {
 public:
  int fresh(TypeSet allowed = kAnyType);
  int find(int v);
  TypeSet set(int v) { return sets_[find(v)]; }
  // Narrows v's set; returns false (and leaves the set unchanged) when that would empty it.
  bool restrict(int v, TypeSet allowed);
  // Makes a and b one variable; returns false (and does nothing) when their sets are disjoint.
  bool unify(int a, int b);

 private:
  std::vector<int> parent_;
  std::vector<TypeSet> sets_;
};

}  // namespace fusor::dsl
