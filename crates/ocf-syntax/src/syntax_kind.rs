//! The kinds of tokens and nodes in a formula tree, and the rowan language that ties them together.

/// Every kind of token and node. Tokens come first, then nodes; `ERROR` is both a token (bytes the
/// lexer cannot read) and a node (tokens the parser could not place).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u16)]
#[allow(non_camel_case_types)]
pub enum SyntaxKind {
    // Trivia.
    WHITESPACE = 0,

    // Literals and names.
    /// `19`
    INT,
    /// `0.5`
    DECIMAL,
    /// `'arrows'` or `"arrows"`, quotes included.
    STRING,
    /// A whole dice literal: `2d6kh1`, `1d%`, `4dF`.
    DICE,
    /// The dice part of a computed count, right after `)`: the `d6kh1` of `(expr)d6kh1`.
    DICE_SUFFIX,
    /// `[A-Za-z_][A-Za-z0-9_]*`, keywords excepted.
    IDENT,

    // Keywords.
    TRUE_KW,
    FALSE_KW,
    NULL_KW,
    IN_KW,

    // Punctuation.
    PLUS,
    MINUS,
    STAR,
    SLASH,
    PERCENT,
    BANG,
    AMP2,
    PIPE2,
    EQ2,
    NEQ,
    LT,
    LTEQ,
    GT,
    GTEQ,
    QUESTION,
    COLON,
    DOT,
    COMMA,
    L_PAREN,
    R_PAREN,
    L_BRACK,
    R_BRACK,

    /// Bytes that are no token (`#`, a lone `&`, non-ASCII), or, as a node, tokens that fit nowhere.
    ERROR,

    // Nodes.
    /// The root: one expression, with leading and trailing whitespace.
    FORMULA,
    /// `19`, `0.5`, `'arrows'`, `true`, `false`, `null`.
    LITERAL,
    /// `2d6kh1`.
    DICE_LITERAL,
    /// `(params.rating.value)d6kh1`: `(`, the count, `)`, then a `DICE_SUFFIX`.
    COMPUTED_DICE,
    /// A bare name: `x`, `self`, `abilities`.
    NAME_REF,
    /// `receiver.name`
    FIELD_EXPR,
    /// `base[index]`
    INDEX_EXPR,
    /// `name(args)`: a `NAME_REF` then an `ARG_LIST`.
    CALL_EXPR,
    /// `(a, b)` of a call.
    ARG_LIST,
    /// `-x`, `!x`
    PREFIX_EXPR,
    /// `a + b`, `a in b`, ...
    BIN_EXPR,
    /// `c ? a : b`
    TERNARY_EXPR,
    /// `(expr)`
    PAREN_EXPR,
    /// `[a, b]`
    LIST_EXPR,
}

use SyntaxKind::*;

impl SyntaxKind {
    /// The last kind; kinds are numbered densely from zero up to it.
    const LAST: SyntaxKind = LIST_EXPR;

    pub fn is_trivia(self) -> bool {
        self == WHITESPACE
    }

    pub fn is_keyword(self) -> bool {
        matches!(self, TRUE_KW | FALSE_KW | NULL_KW | IN_KW)
    }

    /// The keyword spelled `text`, if it is one.
    pub fn from_keyword(text: &str) -> Option<SyntaxKind> {
        Some(match text {
            "true" => TRUE_KW,
            "false" => FALSE_KW,
            "null" => NULL_KW,
            "in" => IN_KW,
            _ => return None,
        })
    }

    /// The fixed text of a keyword or punctuation token, for messages ("expected `)`").
    pub fn fixed_text(self) -> Option<&'static str> {
        Some(match self {
            TRUE_KW => "true",
            FALSE_KW => "false",
            NULL_KW => "null",
            IN_KW => "in",
            PLUS => "+",
            MINUS => "-",
            STAR => "*",
            SLASH => "/",
            PERCENT => "%",
            BANG => "!",
            AMP2 => "&&",
            PIPE2 => "||",
            EQ2 => "==",
            NEQ => "!=",
            LT => "<",
            LTEQ => "<=",
            GT => ">",
            GTEQ => ">=",
            QUESTION => "?",
            COLON => ":",
            DOT => ".",
            COMMA => ",",
            L_PAREN => "(",
            R_PAREN => ")",
            L_BRACK => "[",
            R_BRACK => "]",
            _ => return None,
        })
    }
}

impl From<SyntaxKind> for rowan::SyntaxKind {
    fn from(kind: SyntaxKind) -> Self {
        rowan::SyntaxKind(kind as u16)
    }
}

/// The rowan language of formulas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OcfLanguage {}

impl rowan::Language for OcfLanguage {
    type Kind = SyntaxKind;

    fn kind_from_raw(raw: rowan::SyntaxKind) -> SyntaxKind {
        assert!(
            raw.0 <= SyntaxKind::LAST as u16,
            "not a formula syntax kind: {}",
            raw.0
        );
        // SAFETY: `SyntaxKind` is `repr(u16)` with dense discriminants from 0 to `LAST`, checked above.
        unsafe { std::mem::transmute::<u16, SyntaxKind>(raw.0) }
    }

    fn kind_to_raw(kind: SyntaxKind) -> rowan::SyntaxKind {
        kind.into()
    }
}

pub type SyntaxNode = rowan::SyntaxNode<OcfLanguage>;
pub type SyntaxToken = rowan::SyntaxToken<OcfLanguage>;
pub type SyntaxElement = rowan::SyntaxElement<OcfLanguage>;
pub type SyntaxNodeChildren = rowan::SyntaxNodeChildren<OcfLanguage>;

#[cfg(test)]
mod tests {
    use super::*;
    use rowan::Language;

    #[test]
    fn every_kind_round_trips_through_raw() {
        for raw in 0..=SyntaxKind::LAST as u16 {
            let kind = OcfLanguage::kind_from_raw(rowan::SyntaxKind(raw));
            assert_eq!(OcfLanguage::kind_to_raw(kind).0, raw);
        }
    }
}
