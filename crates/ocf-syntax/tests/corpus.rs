//! The spec's formula corpus (testdata/formulas/corpus.txt): every line parses without error, the
//! tree holds the text exactly, and the canonical print is the line itself.

use ocf_syntax::ast::AstNode;
use ocf_syntax::{SyntaxNode, parse, printer};

const CORPUS: &str = include_str!("../../../testdata/formulas/corpus.txt");

fn formulas() -> impl Iterator<Item = (usize, &'static str)> {
    CORPUS
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let formula = line.rsplit_once(" # ").map_or(line, |(formula, _)| formula);
            (i + 1, formula)
        })
}

/// How many expression nodes deep the tree is (argument lists are not expressions).
fn expr_depth(node: &SyntaxNode) -> usize {
    let own = usize::from(ocf_syntax::ast::Expr::can_cast(node.kind()));
    own + node
        .children()
        .map(|child| expr_depth(&child))
        .max()
        .unwrap_or(0)
}

#[test]
fn every_corpus_formula_parses_and_prints_back_as_written() {
    let mut count = 0;
    let mut deepest = 0;
    for (line, formula) in formulas() {
        let parse = parse(formula);
        assert!(
            parse.errors.is_empty(),
            "line {line}: {formula}\n{}",
            parse.debug_tree()
        );
        assert_eq!(
            parse.syntax_node().text().to_string(),
            formula,
            "line {line}"
        );
        assert_eq!(
            printer::print_formula(&parse).as_deref(),
            Some(formula),
            "line {line}"
        );
        deepest = deepest.max(expr_depth(&parse.syntax_node()));
        count += 1;
    }
    assert_eq!(count, 169);
    // The default depth limit leaves room above the deepest formula of the spec.
    assert_eq!(deepest, 9);
    assert!(deepest * 4 < ocf_syntax::Limits::default().max_formula_depth);
}
