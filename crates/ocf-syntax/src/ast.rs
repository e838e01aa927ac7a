//! The typed AST: thin views over the rowan tree, in the style of rust-analyzer.
//!
//! A tree with errors has holes, so every accessor returns an `Option`. Children are found by their
//! place around the operator token (`lhs` ends before the operator, `rhs` starts after it), so an
//! `ERROR` node standing in for a missing operand never shifts one into the other's place.

use rowan::{TextSize, ast::support};

use crate::SyntaxKind::{self, *};
use crate::dice::{self, DiceNotation};
use crate::{OcfLanguage, SyntaxNode, SyntaxToken, escape};

pub use rowan::ast::AstNode;

macro_rules! ast_node {
    ($(#[$doc:meta])* $name:ident, $kind:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct $name {
            syntax: SyntaxNode,
        }

        impl AstNode for $name {
            type Language = OcfLanguage;

            fn can_cast(kind: SyntaxKind) -> bool {
                kind == $kind
            }

            fn cast(syntax: SyntaxNode) -> Option<Self> {
                Self::can_cast(syntax.kind()).then(|| $name { syntax })
            }

            fn syntax(&self) -> &SyntaxNode {
                &self.syntax
            }
        }
    };
}

ast_node!(
    /// The root of a formula's tree.
    Formula, FORMULA
);
ast_node!(
    /// `19`, `0.5`, `'arrows'`, `true`, `false`, `null`.
    Literal, LITERAL
);
ast_node!(
    /// `2d6kh1`.
    DiceLiteral, DICE_LITERAL
);
ast_node!(
    /// `(params.rating.value)d6kh1`.
    ComputedDice, COMPUTED_DICE
);
ast_node!(
    /// A bare name: `self`, `x`, `abilities`.
    NameRef, NAME_REF
);
ast_node!(
    /// `receiver.name`.
    FieldExpr, FIELD_EXPR
);
ast_node!(
    /// `base[index]`.
    IndexExpr, INDEX_EXPR
);
ast_node!(
    /// `name(args)`.
    CallExpr, CALL_EXPR
);
ast_node!(
    /// The `(a, b)` of a call.
    ArgList, ARG_LIST
);
ast_node!(
    /// `-x`, `!x`.
    PrefixExpr, PREFIX_EXPR
);
ast_node!(
    /// `lhs op rhs`.
    BinExpr, BIN_EXPR
);
ast_node!(
    /// `condition ? then : else`.
    TernaryExpr, TERNARY_EXPR
);
ast_node!(
    /// `(expr)`.
    ParenExpr, PAREN_EXPR
);
ast_node!(
    /// `[a, b]`.
    ListExpr, LIST_EXPR
);

/// Any expression.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    Literal(Literal),
    DiceLiteral(DiceLiteral),
    ComputedDice(ComputedDice),
    NameRef(NameRef),
    FieldExpr(FieldExpr),
    IndexExpr(IndexExpr),
    CallExpr(CallExpr),
    PrefixExpr(PrefixExpr),
    BinExpr(BinExpr),
    TernaryExpr(TernaryExpr),
    ParenExpr(ParenExpr),
    ListExpr(ListExpr),
}

impl AstNode for Expr {
    type Language = OcfLanguage;

    fn can_cast(kind: SyntaxKind) -> bool {
        matches!(
            kind,
            LITERAL
                | DICE_LITERAL
                | COMPUTED_DICE
                | NAME_REF
                | FIELD_EXPR
                | INDEX_EXPR
                | CALL_EXPR
                | PREFIX_EXPR
                | BIN_EXPR
                | TERNARY_EXPR
                | PAREN_EXPR
                | LIST_EXPR
        )
    }

    fn cast(syntax: SyntaxNode) -> Option<Self> {
        Some(match syntax.kind() {
            LITERAL => Expr::Literal(Literal { syntax }),
            DICE_LITERAL => Expr::DiceLiteral(DiceLiteral { syntax }),
            COMPUTED_DICE => Expr::ComputedDice(ComputedDice { syntax }),
            NAME_REF => Expr::NameRef(NameRef { syntax }),
            FIELD_EXPR => Expr::FieldExpr(FieldExpr { syntax }),
            INDEX_EXPR => Expr::IndexExpr(IndexExpr { syntax }),
            CALL_EXPR => Expr::CallExpr(CallExpr { syntax }),
            PREFIX_EXPR => Expr::PrefixExpr(PrefixExpr { syntax }),
            BIN_EXPR => Expr::BinExpr(BinExpr { syntax }),
            TERNARY_EXPR => Expr::TernaryExpr(TernaryExpr { syntax }),
            PAREN_EXPR => Expr::ParenExpr(ParenExpr { syntax }),
            LIST_EXPR => Expr::ListExpr(ListExpr { syntax }),
            _ => return None,
        })
    }

    fn syntax(&self) -> &SyntaxNode {
        match self {
            Expr::Literal(it) => &it.syntax,
            Expr::DiceLiteral(it) => &it.syntax,
            Expr::ComputedDice(it) => &it.syntax,
            Expr::NameRef(it) => &it.syntax,
            Expr::FieldExpr(it) => &it.syntax,
            Expr::IndexExpr(it) => &it.syntax,
            Expr::CallExpr(it) => &it.syntax,
            Expr::PrefixExpr(it) => &it.syntax,
            Expr::BinExpr(it) => &it.syntax,
            Expr::TernaryExpr(it) => &it.syntax,
            Expr::ParenExpr(it) => &it.syntax,
            Expr::ListExpr(it) => &it.syntax,
        }
    }
}

// Finding children by place -------------------------------------------------------------------------

/// The first direct token child of `node` whose kind passes `pred`.
fn token_where(node: &SyntaxNode, pred: impl Fn(SyntaxKind) -> bool) -> Option<SyntaxToken> {
    node.children_with_tokens()
        .filter_map(|it| it.into_token())
        .find(|t| pred(t.kind()))
}

/// The first expression child that ends at or before `offset`.
fn expr_before(node: &SyntaxNode, offset: TextSize) -> Option<Expr> {
    node.children()
        .filter_map(Expr::cast)
        .find(|e| e.syntax().text_range().end() <= offset)
}

/// The first expression child that starts at or after `offset`.
fn expr_after(node: &SyntaxNode, offset: TextSize) -> Option<Expr> {
    node.children()
        .filter_map(Expr::cast)
        .find(|e| e.syntax().text_range().start() >= offset)
}

/// The first expression child between `start` and `end`.
fn expr_between(node: &SyntaxNode, start: TextSize, end: TextSize) -> Option<Expr> {
    expr_after(node, start).filter(|e| e.syntax().text_range().end() <= end)
}

// Accessors -----------------------------------------------------------------------------------------

impl Formula {
    pub(crate) fn cast_root(syntax: SyntaxNode) -> Formula {
        debug_assert_eq!(syntax.kind(), FORMULA);
        Formula { syntax }
    }

    /// The formula's expression; `None` if the text held none (empty, or too long to read).
    pub fn expr(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

/// What a literal is, decoded as far as syntax goes: numbers keep their text (the evaluator owns
/// the number types), strings have their escapes read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LiteralKind {
    /// `19`, as written (digits only; a minus sign is a `PrefixExpr`).
    Int(String),
    /// `0.5`, as written.
    Decimal(String),
    /// The string's value, escapes read. A bad escape is kept as written (and is a syntax error).
    String(String),
    Bool(bool),
    Null,
}

impl Literal {
    pub fn token(&self) -> Option<SyntaxToken> {
        token_where(&self.syntax, |k| !k.is_trivia())
    }

    pub fn kind(&self) -> Option<LiteralKind> {
        let token = self.token()?;
        Some(match token.kind() {
            INT => LiteralKind::Int(token.text().to_string()),
            DECIMAL => LiteralKind::Decimal(token.text().to_string()),
            STRING => LiteralKind::String(escape::decode(token.text()).0),
            TRUE_KW => LiteralKind::Bool(true),
            FALSE_KW => LiteralKind::Bool(false),
            NULL_KW => LiteralKind::Null,
            _ => return None,
        })
    }
}

impl DiceLiteral {
    pub fn token(&self) -> Option<SyntaxToken> {
        token_where(&self.syntax, |k| k == DICE)
    }

    /// The notation, or `None` if the literal is invalid (then the parse has an error for it).
    pub fn notation(&self) -> Option<DiceNotation> {
        dice::decode(self.token()?.text()).ok()
    }
}

impl ComputedDice {
    /// The expression in parentheses that gives the number of dice.
    pub fn count(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }

    /// The `d6kh1` after the `)`.
    pub fn suffix_token(&self) -> Option<SyntaxToken> {
        token_where(&self.syntax, |k| k == DICE_SUFFIX)
    }

    /// The notation of the suffix, with `count` `None`; `None` if the suffix is invalid.
    pub fn notation(&self) -> Option<DiceNotation> {
        dice::decode(self.suffix_token()?.text()).ok()
    }
}

impl NameRef {
    pub fn ident_token(&self) -> Option<SyntaxToken> {
        token_where(&self.syntax, |k| k == IDENT)
    }

    /// The name as written.
    pub fn text(&self) -> Option<String> {
        self.ident_token().map(|t| t.text().to_string())
    }
}

impl FieldExpr {
    pub fn dot_token(&self) -> Option<SyntaxToken> {
        token_where(&self.syntax, |k| k == DOT)
    }

    pub fn receiver(&self) -> Option<Expr> {
        let dot = self.dot_token()?;
        expr_before(&self.syntax, dot.text_range().start())
    }

    /// The field's name token (`name` of `receiver.name`).
    pub fn name(&self) -> Option<SyntaxToken> {
        token_where(&self.syntax, |k| k == IDENT)
    }
}

impl IndexExpr {
    fn l_brack(&self) -> Option<SyntaxToken> {
        token_where(&self.syntax, |k| k == L_BRACK)
    }

    pub fn base(&self) -> Option<Expr> {
        expr_before(&self.syntax, self.l_brack()?.text_range().start())
    }

    pub fn index(&self) -> Option<Expr> {
        expr_after(&self.syntax, self.l_brack()?.text_range().end())
    }
}

impl CallExpr {
    /// What is called: a `NameRef` in a valid tree.
    pub fn callee(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }

    /// The function's name; `None` if what is called is not a plain name (a syntax error).
    pub fn name_ref(&self) -> Option<NameRef> {
        match self.callee()? {
            Expr::NameRef(name) => Some(name),
            _ => None,
        }
    }

    /// The function's name token.
    pub fn name(&self) -> Option<SyntaxToken> {
        self.name_ref()?.ident_token()
    }

    pub fn arg_list(&self) -> Option<ArgList> {
        support::child(&self.syntax)
    }

    /// The arguments, in order.
    pub fn args(&self) -> impl Iterator<Item = Expr> + use<> {
        self.arg_list().into_iter().flat_map(|list| list.args())
    }
}

impl ArgList {
    pub fn args(&self) -> impl Iterator<Item = Expr> + use<> {
        support::children(&self.syntax)
    }
}

/// A prefix operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrefixOp {
    /// `-`
    Neg,
    /// `!`
    Not,
}

impl PrefixOp {
    pub fn as_str(self) -> &'static str {
        match self {
            PrefixOp::Neg => "-",
            PrefixOp::Not => "!",
        }
    }
}

impl PrefixExpr {
    pub fn op_token(&self) -> Option<SyntaxToken> {
        token_where(&self.syntax, |k| matches!(k, MINUS | BANG))
    }

    pub fn op_kind(&self) -> Option<PrefixOp> {
        match self.op_token()?.kind() {
            MINUS => Some(PrefixOp::Neg),
            BANG => Some(PrefixOp::Not),
            _ => None,
        }
    }

    pub fn operand(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

/// A binary operator, loosest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinaryOp {
    fn from_kind(kind: SyntaxKind) -> Option<BinaryOp> {
        Some(match kind {
            PIPE2 => BinaryOp::Or,
            AMP2 => BinaryOp::And,
            EQ2 => BinaryOp::Eq,
            NEQ => BinaryOp::Ne,
            LT => BinaryOp::Lt,
            LTEQ => BinaryOp::Le,
            GT => BinaryOp::Gt,
            GTEQ => BinaryOp::Ge,
            IN_KW => BinaryOp::In,
            PLUS => BinaryOp::Add,
            MINUS => BinaryOp::Sub,
            STAR => BinaryOp::Mul,
            SLASH => BinaryOp::Div,
            PERCENT => BinaryOp::Rem,
            _ => return None,
        })
    }

    /// The operator as written: `||`, `in`, `+`.
    pub fn as_str(self) -> &'static str {
        match self {
            BinaryOp::Or => "||",
            BinaryOp::And => "&&",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::In => "in",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
        }
    }
}

impl BinExpr {
    pub fn op_token(&self) -> Option<SyntaxToken> {
        token_where(&self.syntax, |k| BinaryOp::from_kind(k).is_some())
    }

    pub fn op_kind(&self) -> Option<BinaryOp> {
        BinaryOp::from_kind(self.op_token()?.kind())
    }

    pub fn lhs(&self) -> Option<Expr> {
        expr_before(&self.syntax, self.op_token()?.text_range().start())
    }

    pub fn rhs(&self) -> Option<Expr> {
        expr_after(&self.syntax, self.op_token()?.text_range().end())
    }
}

impl TernaryExpr {
    fn question(&self) -> Option<SyntaxToken> {
        token_where(&self.syntax, |k| k == QUESTION)
    }

    fn colon(&self) -> Option<SyntaxToken> {
        token_where(&self.syntax, |k| k == COLON)
    }

    pub fn condition(&self) -> Option<Expr> {
        expr_before(&self.syntax, self.question()?.text_range().start())
    }

    pub fn then_branch(&self) -> Option<Expr> {
        let start = self.question()?.text_range().end();
        match self.colon() {
            Some(colon) => expr_between(&self.syntax, start, colon.text_range().start()),
            None => expr_after(&self.syntax, start),
        }
    }

    pub fn else_branch(&self) -> Option<Expr> {
        expr_after(&self.syntax, self.colon()?.text_range().end())
    }
}

impl ParenExpr {
    pub fn expr(&self) -> Option<Expr> {
        support::child(&self.syntax)
    }
}

impl ListExpr {
    pub fn items(&self) -> impl Iterator<Item = Expr> + use<> {
        support::children(&self.syntax)
    }
}
