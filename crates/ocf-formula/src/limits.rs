//! Safety limits on lowering and evaluation (catalogue §7.1: "Packs are untrusted, so every
//! implementation enforces the safety limits"). Reaching one is `safety-limit-exceeded`.

/// The values are PROVISIONAL in the spec; these defaults are ours (decisions.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvalLimits {
    /// `maxFormulaDepth`: how deeply a lowered formula may nest. Evaluation and checking recurse
    /// along the tree, so this also bounds their recursion.
    pub max_depth: usize,
    /// The longest string, in bytes, a formula may produce by concatenation or `string()`.
    pub max_string_len: usize,
    /// The longest list a formula may build (a list literal, `map`, `filter`).
    pub max_list_len: usize,
    /// The largest computed dice count in `(expr)dS` (like `maxDicePerItem`).
    pub max_dice_count: u32,
    /// How many expressions one evaluation may evaluate, counting each element a list function
    /// or copy aggregate visits: nested aggregates over large data stay bounded.
    pub max_steps: u64,
}

impl Default for EvalLimits {
    fn default() -> EvalLimits {
        EvalLimits {
            max_depth: 64,
            max_string_len: 64 * 1024,
            max_list_len: 10_000,
            max_dice_count: 1_000,
            max_steps: 1_000_000,
        }
    }
}
