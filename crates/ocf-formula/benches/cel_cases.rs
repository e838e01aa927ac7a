//! The eight expressions ocf and `cel-interpreter` evaluate side by side (issue 11), each written
//! in both languages, and the values they read: ints `a = 4`, `b = 7`, `c = 2`, a bool `flag`,
//! strings `s`, `t`, a list of strings `tags`, and a map `item` with a map `stats` in it. In ocf
//! the plain names are fields and `item` is its root; in CEL all are variables.
//! Shared by `benches/versus_cel.rs` and `examples/versus_cel.rs` (callgrind's counts).

/// `(name, ocf, cel)`.
pub const CASES: &[(&str, &str, &str)] = &[
    (
        "arithmetic",
        "(a + b) * 3 - c * 2 + 7",
        "(a + b) * 3 - c * 2 + 7",
    ),
    (
        "logic chain",
        "a > 1 && b < 10 && c != 5 || flag",
        "a > 1 && b < 10 && c != 5 || flag",
    ),
    ("member access", "item.stats.weight", "item.stats.weight"),
    ("ternary", "a > b ? a - b : b - a", "a > b ? a - b : b - a"),
    ("size(list) > 0", "size(tags) > 0", "size(tags) > 0"),
    ("string concatenation", "s + \" \" + t", "s + \" \" + t"),
    ("in", "\"b\" in tags", "\"b\" in tags"),
    (
        "max + min",
        "max(a, b) + min(b, c)",
        "max(a, b) + min(b, c)",
    ),
];

/// The ocf context: the values above.
pub fn ocf_context() -> ocf_formula::MapContext {
    ocf_formula::MapContext::from_json(&serde_json::json!({
        "fields": {
            "a": 4, "b": 7, "c": 2, "flag": false,
            "s": "fire", "t": "ball", "tags": ["a", "b", "c"],
        },
        "item": { "stats": { "weight": 3, "bulk": 1 } },
    }))
    .expect("a valid context")
}

/// The CEL context: the same values.
pub fn cel_context() -> cel_interpreter::Context<'static> {
    use std::collections::HashMap;
    let mut ctx = cel_interpreter::Context::default();
    ctx.add_variable_from_value("a", 4i64);
    ctx.add_variable_from_value("b", 7i64);
    ctx.add_variable_from_value("c", 2i64);
    ctx.add_variable_from_value("flag", false);
    ctx.add_variable_from_value("s", "fire");
    ctx.add_variable_from_value("t", "ball");
    ctx.add_variable_from_value("tags", vec!["a", "b", "c"]);
    let stats: HashMap<&str, i64> = [("weight", 3), ("bulk", 1)].into_iter().collect();
    let item: HashMap<&str, cel_interpreter::Value> =
        [("stats", stats.into())].into_iter().collect();
    ctx.add_variable_from_value("item", item);
    ctx
}
