// What `fusor explain --rule NAME` reports about one rule during an optimization run: every root
// node where the rule was tried, and what happened there (applied, a near miss and the constraint
// that failed, a match whose rewrite was refused or that the provider's kernels cannot run, or a
// node another rule rewrote first).
//
// The runner (runner.h) fills ExplainRecords while it runs, one per root node (for a rule with
// several bodies, the body that got furthest): a
// node tried again later (its neighbourhood changed) keeps only its last outcome, which is the one
// that holds at the fixed point. The session (optimize.h) wraps them in an ExplainResult with
// the rule's own facts (where it is defined, whether it ran at this level for this provider).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "engine/rewrite/match.h"
#include "core/pattern/rule.h"

namespace fusor {

enum class ExplainKind {
  Applied,    // matched and rewritten
  NearMiss,   // the root op matched, the rest of the pattern or the where clause did not
  Refused,    // matched, but the rewrite would change a type or shape (or cannot be built)
  Skipped,    // matched, but the provider's kernel declarations cannot run the rewrite's result
  Preempted,  // a higher-priority rule rewrote this node before this rule was tried there
};
// "applied", "near miss", "refused", "skipped", "preempted"
const char* explain_kind_name(ExplainKind k);

struct ExplainRecord {
  std::string root;        // the root node's name
  std::string op;          // its op ("Mul", "fusor.FusedConv")
  bool matched = false;    // the rule matched here (Applied, Refused, Skipped)
  bool applied = false;    // ... and its rewrite was applied
  std::string reason;      // near miss: "node 'mul' (Mul): input 1: expected literal 0.5, ..."; refusal reason

  ExplainKind kind = ExplainKind::NearMiss;
  std::string graph;       // the graph's name (subgraphs are named after their owner's attribute)
  std::string location;    // the rule's FILE:LINE
  int body = 0;            // which body of a rule whose patterns have alternatives (0: the first)
  size_t iteration = 0;    // the fixed-point loop's step (worklist pops so far, 1-based)
  size_t rewrite_index = 0;            // Applied: this rewrite's position among all of the run's (1-based)
  std::vector<std::string> nodes;      // matched nodes' names, pattern order (Applied, Refused, Skipped)
  std::vector<std::string> new_ops;    // Applied: ops of the nodes the rewrite created
  // Near miss: where the failing constraint is.
  MissKind constraint = MissKind::Op;
  std::string at_node;     // the graph node checked when it failed ("" for none)
  std::string at_op;
  int at_input = -1;       // the input of at_node it is about
  std::string consumer;    // at_node was reached through input `consumer_input` of this node
  int consumer_input = -1;
  // Preempted: the rule that rewrote the node first. NearMiss: the rule or pass that later
  // removed the root ("" while it is still in the graph).
  std::string by_rule;
};

// The rule's own facts plus its records, for one optimization run.
struct ExplainResult {
  std::string rule;                    // the name asked for
  std::vector<std::string> locations;  // FILE:LINE of each definition (one per file defining it)
  std::string level;                   // the rule's level ("extended")
  bool ran = false;                    // it was selected at this level for this provider, not disabled
  std::string not_run_reason;          // why not, when !ran
  std::string provider;                // the provider whose rules and kernels were used
  std::vector<ExplainRecord> records;
};

// The records of two runs over the same model one after the other (optimize runs the levels
// below layout to their fixed point first): a root the second run tried again keeps its second
// outcome; the second run's steps and rewrite numbers continue the first's.
std::vector<ExplainRecord> merge_explain_runs(std::vector<ExplainRecord> first, std::vector<ExplainRecord> second,
                                              size_t first_steps, size_t first_rewrites);

// Why a where clause is not true for this match, reading the failing part with its operands'
// values: "rank(w) == 4 is false: rank(w) = 3", "shape(x)[1] % 8 == 0 is unknown: shape(x) =
// [N, ?, 16]". For a conjunction, the first conjunct that is not true.
std::string explain_predicate(const Expr& e, const Pattern& p, const Match& m, MatchEnv& env);

// A where expression as rule text (var names from the pattern; anonymous vars print "_tN").
std::string expr_text(const Expr& e, const Pattern& p);

}  // namespace fusor
