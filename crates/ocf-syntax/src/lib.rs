//! The syntax of OCF formulas: a lexer, a parser that never fails and keeps every byte of its input
//! in a rowan tree, a typed AST over that tree, and the standard printer.
//!
//! ```
//! let parse = ocf_syntax::parse("floor(level.total / 2) + 1");
//! assert!(parse.errors.is_empty());
//! let expr = parse.root().expr().unwrap();
//! assert_eq!(ocf_syntax::printer::print(&expr), "floor(level.total / 2) + 1");
//! ```

pub mod ast;
pub mod dice;
mod error;
mod escape;
mod lexer;
mod limits;
mod parser;
pub mod printer;
mod syntax_kind;

pub use rowan::{GreenNode, TextRange, TextSize};

pub use crate::error::{ErrorCode, SyntaxError};
pub use crate::escape::quote_string;
pub use crate::limits::Limits;
pub use crate::syntax_kind::{
    OcfLanguage, SyntaxElement, SyntaxKind, SyntaxNode, SyntaxNodeChildren, SyntaxToken,
};

/// The result of parsing a formula: a lossless tree (its text is the input, byte for byte) and the
/// errors found, in text order. A tree with errors has holes that the AST's accessors report as
/// `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parse {
    pub green: GreenNode,
    pub errors: Vec<SyntaxError>,
}

impl Parse {
    /// The tree, as a rowan node to walk.
    pub fn syntax_node(&self) -> SyntaxNode {
        SyntaxNode::new_root(self.green.clone())
    }

    /// The typed root.
    pub fn root(&self) -> ast::Formula {
        ast::Formula::cast_root(self.syntax_node())
    }

    /// Whether the formula parsed without errors.
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }

    /// The tree, one node or token per line with its range (`BIN_EXPR@0..5`, `INT@0..1 "1"`),
    /// then one line per error (`error 3..4: formula-syntax: ...`).
    pub fn debug_tree(&self) -> String {
        let mut out = format!("{:#?}", self.syntax_node());
        for error in &self.errors {
            out.push_str(&error.to_string());
            out.push('\n');
        }
        out
    }
}

/// Parses `text` with the default [`Limits`].
pub fn parse(text: &str) -> Parse {
    parse_with_limits(text, &Limits::default())
}

/// Parses `text`. Never fails and never panics: problems are in [`Parse::errors`].
///
/// A text longer than `limits.max_formula_length` bytes is not read: its tree is one `ERROR` node
/// and its one error is `safety-limit-exceeded`. Otherwise the expression tree is never deeper than
/// `limits.max_formula_depth` expression nodes (every operator, prefix, call, index, field access,
/// paren, list and computed dice counts one level; `1 + 1 + 1` is three deep); past it there is
/// one `safety-limit-exceeded` error and the rest of the text is kept in an `ERROR` node.
///
/// **Guarantee:** the rowan tree of any result is at most `2 * max_formula_depth + 3` nodes deep
/// (an argument list or an `ERROR` node adds a level below an expression node), so a later
/// recursive walk of it (printer, lowering, evaluation) needs stack in proportion to
/// `max_formula_depth`, not to the text. The parser's own recursion is bounded the same way.
pub fn parse_with_limits(text: &str, limits: &Limits) -> Parse {
    let (green, errors) = parser::parse(text, limits);
    Parse { green, errors }
}
