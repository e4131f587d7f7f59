#include "dsl/dtype_solver.h"

namespace fusor::dsl {

int DTypeSolver::fresh(TypeSet allowed) {
  parent_.push_back(static_cast<int>(parent_.size()));
  sets_.push_back(allowed);
  return parent_.back();
}

int DTypeSolver::find(int v) {
  while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
  return v;
}

bool DTypeSolver::restrict(int v, TypeSet allowed) {
  int r = find(v);
  if ((sets_[r] & allowed) == 0) return false;
  sets_[r] &= allowed;
  return true;
}

bool DTypeSolver::unify(int a, int b) {
  int ra = find(a), rb = find(b);
  if (ra == rb) return true;
  if ((sets_[ra] & sets_[rb]) == 0) return false;
  parent_[rb] = ra;
  sets_[ra] &= sets_[rb];
  return true;
}

}  // namespace fusor::dsl
