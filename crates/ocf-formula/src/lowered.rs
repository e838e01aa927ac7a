//! The lowered form of a formula: an arena of expressions with names resolved and literals decoded,
//! built once per formula and evaluated as often as needed ("parse once, evaluate often").

use std::fmt;
use std::sync::Arc;

use la_arena::{Arena, ArenaMap, Idx};
use ocf_syntax::dice::{Die, Modifier};

use crate::error::TextRange;
use crate::value::Value;

pub type ExprId = Idx<Expr>;

/// A lowered formula: its expressions, where each came from in the text, and the root expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lowered {
    pub exprs: Arena<Expr>,
    pub ranges: ArenaMap<ExprId, TextRange>,
    pub root: ExprId,
}

impl Lowered {
    pub fn range(&self, id: ExprId) -> TextRange {
        self.ranges.get(id).copied().unwrap_or_default()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// A decoded literal: int, decimal, bool, string, null or a dice literal.
    Literal(Value),
    List(Vec<ExprId>),
    /// A context root (`self`, `steps`, `x`, ...).
    Root(Root),
    /// A field read by its dotted ID (`abilities.str.mod`).
    Field(Arc<str>),
    Member {
        base: ExprId,
        name: Arc<str>,
    },
    Index {
        base: ExprId,
        index: ExprId,
    },
    Unary {
        op: UnaryOp,
        operand: ExprId,
    },
    Binary {
        op: BinaryOp,
        lhs: ExprId,
        rhs: ExprId,
    },
    Conditional {
        cond: ExprId,
        then: ExprId,
        otherwise: ExprId,
    },
    Call {
        function: Function,
        args: Vec<ExprId>,
    },
    /// `(count)dS...`: dice with a computed count.
    ComputedDice {
        count: ExprId,
        die: Die,
        modifiers: Vec<Modifier>,
    },
}

impl Expr {
    /// Whether the expression is a path `has()` can test: a root, a field, or a member or index of
    /// one of those.
    pub fn is_path(&self, lowered: &Lowered) -> bool {
        match self {
            Expr::Root(_) | Expr::Field(_) => true,
            Expr::Member { base, .. } | Expr::Index { base, .. } => {
                lowered.exprs[*base].is_path(lowered)
            }
            _ => false,
        }
    }
}

/// The operators are the syntax's: lowering changes how an expression is stored, not what it says.
pub use ocf_syntax::ast::{BinaryOp, PrefixOp as UnaryOp};

macro_rules! named_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($variant,)* }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }

            pub fn from_name(name: &str) -> Option<$name> {
                match name { $($text => Some($name::$variant),)* _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

named_enum! {
    /// The context roots of catalogue §1.7. The first segment of a dotted name that is one of these
    /// is the root; any other dotted name is a field ID.
    Root {
        SelfCopy = "self",
        Item = "item",
        Base = "base",
        Prior = "prior",
        Character = "character",
        Links = "links",
        Params = "params",
        Situational = "situational",
        Participants = "participants",
        Participant = "participant",
        Steps = "steps",
        Flags = "flags",
        Action = "action",
        Roll = "roll",
        Incoming = "incoming",
        Pick = "pick",
        Slot = "slot",
        Picks = "picks",
        Options = "options",
        Choice = "choice",
        Picked = "picked",
        Change = "change",
        X = "x",
        Part = "part",
        Batch = "batch",
        Entry = "entry",
        Copy = "copy",
        Field = "field",
        Amount = "amount",
    }
}

named_enum! {
    /// The functions of the formula language (catalogue §1.6, and the list functions; see
    /// `docs/spec/formulas.md`, Functions).
    Function {
        Has = "has",
        Size = "size",
        Min = "min",
        Max = "max",
        Floor = "floor",
        Ceil = "ceil",
        Round = "round",
        Abs = "abs",
        String = "string",
        IndexOf = "indexOf",
        DieOf = "dieOf",
        MaxOf = "maxOf",
        MinOf = "minOf",
        CountCopies = "countCopies",
        SumCopies = "sumCopies",
        MaxCopies = "maxCopies",
        MinCopies = "minCopies",
        SumFields = "sumFields",
        FieldOf = "fieldOf",
        Any = "any",
        All = "all",
        Filter = "filter",
        Map = "map",
        Count = "count",
        Sum = "sum",
    }
}

/// How many arguments a function takes: at least `min`, at most `max` (`None`: any number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arity {
    pub min: usize,
    pub max: Option<usize>,
}

impl Function {
    pub fn arity(self) -> Arity {
        let (min, max) = match self {
            Function::Min | Function::Max => (2, None),
            Function::IndexOf
            | Function::Any
            | Function::All
            | Function::Filter
            | Function::Map
            | Function::Count => (2, Some(2)),
            Function::SumCopies | Function::MaxCopies | Function::MinCopies => (1, Some(2)),
            Function::FieldOf => (3, Some(3)),
            _ => (1, Some(1)),
        };
        Arity { min, max }
    }

    /// The functions that read the character through the context (EC, EA: "character functions").
    pub fn is_character_function(self) -> bool {
        matches!(
            self,
            Function::CountCopies
                | Function::SumCopies
                | Function::MaxCopies
                | Function::MinCopies
                | Function::SumFields
                | Function::FieldOf
        )
    }
}
