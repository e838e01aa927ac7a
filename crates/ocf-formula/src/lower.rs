//! Lowering: from the syntax tree (`ocf_syntax::ast`) to the [`Lowered`] arena. Names are resolved
//! and literals decoded here, once per formula.

use std::sync::Arc;

use la_arena::{Arena, ArenaMap};
use ocf_dice::value::{DiceTerm, DiceValue};
use ocf_syntax::ast::{self, AstNode, LiteralKind};

use crate::decimal::{Decimal, ParseDecimalError};
use crate::error::{ErrorCode, FormulaError, TextRange};
use crate::limits::Limits;
use crate::lowered::{Expr, ExprId, Function, Lowered, Root};
use crate::value::Value;

/// Lowers a formula that parsed without errors. Reports every problem found: an unknown function
/// (`unknown-name`), a literal out of range (`formula-syntax`), a dice count or nesting past the
/// limits (`safety-limit-exceeded`).
pub fn lower(formula: &ast::Formula, limits: &Limits) -> Result<Lowered, Vec<FormulaError>> {
    let range = formula.syntax().text_range();
    lower_with(limits, |lowerer| match formula.expr() {
        Some(expr) => lowerer.expr(&expr, 1),
        None => lowerer.hole(range, "the formula is empty"),
    })
}

/// One expression of a parsed formula lowered on its own, as if it were the whole formula (its
/// ranges stay those of the text it was parsed from).
pub fn lower_expr(expr: &ast::Expr, limits: &Limits) -> Result<Lowered, Vec<FormulaError>> {
    lower_with(limits, |lowerer| lowerer.expr(expr, 1))
}

/// A lowering: `root` lowers the root expression; the lowered formula, or every error met.
fn lower_with(
    limits: &Limits,
    root: impl FnOnce(&mut Lowerer<'_>) -> ExprId,
) -> Result<Lowered, Vec<FormulaError>> {
    let mut lowerer = Lowerer {
        exprs: Arena::new(),
        ranges: ArenaMap::default(),
        errors: Vec::new(),
        limits,
    };
    let root = root(&mut lowerer);
    if lowerer.errors.is_empty() {
        Ok(Lowered {
            exprs: lowerer.exprs,
            ranges: lowerer.ranges,
            root,
        })
    } else {
        Err(lowerer.errors)
    }
}

struct Lowerer<'a> {
    exprs: Arena<Expr>,
    ranges: ArenaMap<ExprId, TextRange>,
    errors: Vec<FormulaError>,
    limits: &'a Limits,
}

impl Lowerer<'_> {
    fn alloc(&mut self, expr: Expr, range: TextRange) -> ExprId {
        let id = self.exprs.alloc(expr);
        self.ranges.insert(id, range);
        id
    }

    fn error(&mut self, code: ErrorCode, message: impl Into<String>, range: TextRange) {
        self.errors.push(FormulaError::new(code, message, range));
    }

    /// Records an error and stands in a `null` for the part that could not be lowered.
    fn hole(&mut self, range: TextRange, message: &str) -> ExprId {
        self.error(ErrorCode::FormulaSyntax, message, range);
        self.alloc(Expr::Literal(Value::Null), range)
    }

    fn child(&mut self, expr: Option<ast::Expr>, parent: TextRange, depth: usize) -> ExprId {
        match expr {
            Some(expr) => self.expr(&expr, depth),
            // The parser reported no error, so a tree without a hole is expected; stay safe anyway.
            None => self.hole(parent, "an expression is missing here"),
        }
    }

    fn expr(&mut self, expr: &ast::Expr, depth: usize) -> ExprId {
        let range = expr.syntax().text_range();
        if depth > self.limits.syntax.max_formula_depth {
            self.error(
                ErrorCode::SafetyLimitExceeded,
                format!(
                    "the formula nests deeper than {}",
                    self.limits.syntax.max_formula_depth
                ),
                range,
            );
            return self.alloc(Expr::Literal(Value::Null), range);
        }
        let next = depth + 1;
        let lowered = match expr {
            ast::Expr::Literal(lit) => match lit.kind() {
                Some(kind) => self.literal(kind, range),
                None => return self.hole(range, "unreadable literal"),
            },
            ast::Expr::DiceLiteral(dice) => match dice.notation() {
                Some(notation) => {
                    let count = notation.count.unwrap_or(1);
                    if count > self.limits.max_dice_count {
                        self.error(
                            ErrorCode::SafetyLimitExceeded,
                            format!(
                                "dice count {count} is above the limit of {}",
                                self.limits.max_dice_count
                            ),
                            range,
                        );
                    }
                    let value = if count == 0 {
                        DiceValue::default()
                    } else {
                        DiceValue::from_term(DiceTerm::new(count, notation.die, notation.modifiers))
                    };
                    Expr::Literal(Value::dice(value))
                }
                None => return self.hole(range, "invalid dice literal"),
            },
            ast::Expr::ComputedDice(dice) => {
                let count = self.child(dice.count(), range, next);
                match dice.notation() {
                    Some(notation) => Expr::ComputedDice {
                        count,
                        die: notation.die,
                        modifiers: notation.modifiers,
                    },
                    None => return self.hole(range, "invalid dice notation"),
                }
            }
            ast::Expr::NameRef(name) => match name.text() {
                Some(text) => resolve_name(&text),
                None => return self.hole(range, "a name is missing"),
            },
            ast::Expr::FieldExpr(field) => {
                // A dotted chain of plain names: a root and its members, or else one field ID.
                if let Some(segments) = dotted_names(field)
                    && Root::from_name(&segments[0]).is_none()
                {
                    Expr::Field(segments.join(".").into())
                } else {
                    let base = self.child(field.receiver(), range, next);
                    match field.name() {
                        Some(name) => Expr::Member {
                            base,
                            name: name.text().into(),
                        },
                        None => return self.hole(range, "a member name is missing"),
                    }
                }
            }
            ast::Expr::IndexExpr(index) => {
                let base = self.child(index.base(), range, next);
                let index = self.child(index.index(), range, next);
                Expr::Index { base, index }
            }
            ast::Expr::CallExpr(call) => {
                let args: Vec<ExprId> = call.args().map(|arg| self.expr(&arg, next)).collect();
                let Some(name) = call.name() else {
                    return self.hole(range, "only a function name can be called");
                };
                match Function::from_name(name.text()) {
                    Some(function) => Expr::Call { function, args },
                    None => {
                        self.error(
                            ErrorCode::UnknownName,
                            format!("no function `{}`", name.text()),
                            name.text_range(),
                        );
                        Expr::Literal(Value::Null)
                    }
                }
            }
            ast::Expr::PrefixExpr(prefix) => {
                let operand = self.child(prefix.operand(), range, next);
                match prefix.op_kind() {
                    Some(op) => Expr::Unary { op, operand },
                    None => return self.hole(range, "an operator is missing"),
                }
            }
            ast::Expr::BinExpr(bin) => {
                let lhs = self.child(bin.lhs(), range, next);
                let rhs = self.child(bin.rhs(), range, next);
                match bin.op_kind() {
                    Some(op) => Expr::Binary { op, lhs, rhs },
                    None => return self.hole(range, "an operator is missing"),
                }
            }
            ast::Expr::TernaryExpr(ternary) => {
                let cond = self.child(ternary.condition(), range, next);
                let then = self.child(ternary.then_branch(), range, next);
                let otherwise = self.child(ternary.else_branch(), range, next);
                Expr::Conditional {
                    cond,
                    then,
                    otherwise,
                }
            }
            // Parentheses only group: the inner expression stands for them, at the same depth.
            ast::Expr::ParenExpr(paren) => return self.child(paren.expr(), range, depth),
            ast::Expr::ListExpr(list) => {
                let items = list.items().map(|item| self.expr(&item, next)).collect();
                Expr::List(items)
            }
        };
        self.alloc(lowered, range)
    }

    fn literal(&mut self, kind: LiteralKind, range: TextRange) -> Expr {
        let value = match kind {
            LiteralKind::Int(text) => match text.parse::<i64>() {
                Ok(n) => Value::Int(n),
                Err(_) => {
                    self.error(
                        ErrorCode::FormulaSyntax,
                        format!("the int `{text}` is out of range"),
                        range,
                    );
                    Value::Null
                }
            },
            LiteralKind::Decimal(text) => match Decimal::parse(&text) {
                Ok(d) => Value::Decimal(d),
                Err(e) => {
                    let why = match e {
                        ParseDecimalError::Overflow => "is out of range",
                        ParseDecimalError::Invalid => "is not a decimal",
                    };
                    self.error(ErrorCode::FormulaSyntax, format!("`{text}` {why}"), range);
                    Value::Null
                }
            },
            LiteralKind::String(s) => Value::String(Arc::from(s)),
            LiteralKind::Bool(b) => Value::Bool(b),
            LiteralKind::Null => Value::Null,
        };
        Expr::Literal(value)
    }
}

/// A single name: a root, or a one-segment field ID.
fn resolve_name(name: &str) -> Expr {
    match Root::from_name(name) {
        Some(root) => Expr::Root(root),
        None => Expr::Field(name.into()),
    }
}

/// The names of `a.b.c` if the whole chain is plain names, first to last.
fn dotted_names(field: &ast::FieldExpr) -> Option<Vec<String>> {
    let mut names = vec![field.name()?.text().to_string()];
    let mut receiver = field.receiver()?;
    loop {
        match receiver {
            ast::Expr::FieldExpr(inner) => {
                names.push(inner.name()?.text().to_string());
                receiver = inner.receiver()?;
            }
            ast::Expr::NameRef(name) => {
                names.push(name.text()?);
                names.reverse();
                return Some(names);
            }
            _ => return None,
        }
    }
}
