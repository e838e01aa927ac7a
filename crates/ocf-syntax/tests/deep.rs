//! Formulas far deeper than the depth limit give one `safety-limit-exceeded` error, never a stack
//! overflow: the parser runs here on a 256 KiB stack, and so do the printer and a recursive walk.

use ocf_syntax::ast::AstNode;
use ocf_syntax::{ErrorCode, Limits, SyntaxNode, parse_with_limits, printer};

fn node_depth(node: &SyntaxNode) -> usize {
    1 + node
        .children()
        .map(|child| node_depth(&child))
        .max()
        .unwrap_or(0)
}

fn deep_formulas() -> Vec<(&'static str, String)> {
    let n = 100_000;
    vec![
        ("parens", "(".repeat(n) + "1" + &")".repeat(n)),
        ("unclosed parens", "(".repeat(n)),
        ("minus", "-".repeat(n) + "1"),
        ("not", "!".repeat(n) + "x"),
        ("lists", "[".repeat(n) + &"]".repeat(n)),
        ("calls", "f(".repeat(n)),
        ("computed dice", "(".repeat(n) + "1" + &")d6".repeat(n)),
        ("left-associative chain", "1+".repeat(n) + "1"),
        ("right-nested ternary", "a ? b : ".repeat(n) + "c"),
        ("nested ternary condition", "(a ? ".repeat(n)),
        ("field chain", "x".to_string() + &".a".repeat(n)),
        ("index chain", "x".to_string() + &"[0]".repeat(n)),
        ("index nesting", "x[".repeat(n)),
        ("minus and parens", "-(".repeat(n)),
    ]
}

#[test]
fn deep_formulas_hit_the_depth_limit_on_a_small_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let limits = Limits {
                max_formula_length: 1_000_000,
                ..Limits::default()
            };
            for (name, text) in deep_formulas() {
                let parse = parse_with_limits(&text, &limits);
                let codes: Vec<ErrorCode> = parse.errors.iter().map(|e| e.code).collect();
                assert_eq!(codes, [ErrorCode::SafetyLimitExceeded], "{name}");
                let root = parse.syntax_node();
                assert_eq!(
                    root.text().len(),
                    ocf_syntax::TextSize::new(text.len() as u32),
                    "{name}"
                );
                assert!(
                    node_depth(&root) <= 2 * limits.max_formula_depth + 3,
                    "{name}"
                );
                if let Some(expr) = parse.root().expr() {
                    printer::print(&expr);
                }
                assert!(root.text() == text.as_str(), "{name}: lossless");
            }
        })
        .unwrap();
    handle.join().expect("no stack overflow, no panic");
}

#[test]
fn the_default_length_limit_applies_before_any_reading() {
    let text = "(".repeat(5000);
    let parse = ocf_syntax::parse(&text);
    assert_eq!(parse.errors.len(), 1);
    assert_eq!(parse.errors[0].code.as_str(), "safety-limit-exceeded");
    assert!(parse.root().expr().is_none());
    assert_eq!(parse.root().syntax().text(), text.as_str());
}

#[test]
fn formulas_at_the_depth_limit_parse() {
    let limits = Limits::default();
    let depth = limits.max_formula_depth;
    // A chain of `depth - 1` operators is `depth` levels deep, counting the leaves.
    let at_limit = "1+".repeat(depth - 1) + "1";
    assert!(parse_with_limits(&at_limit, &limits).errors.is_empty());
    let over = "1+".repeat(depth) + "1";
    assert_eq!(parse_with_limits(&over, &limits).errors.len(), 1);
    let parens = "(".repeat(depth - 1) + "1" + &")".repeat(depth - 1);
    assert!(parse_with_limits(&parens, &limits).errors.is_empty());
    let parens = "(".repeat(depth) + "1" + &")".repeat(depth);
    assert_eq!(parse_with_limits(&parens, &limits).errors.len(), 1);
}
