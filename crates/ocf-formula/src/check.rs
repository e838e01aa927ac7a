//! The static type checker: the type of a lowered formula in an [`Env`], with every
//! `unknown-name` and `type-mismatch` it finds, not just the first. Used by the pack build and a
//! language server; the evaluator checks the same rules again at run time.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::context::MapContext;
use crate::error::{ErrorCode, FormulaError, TextRange};
use crate::lowered::{BinaryOp, Expr, ExprId, Function, Lowered, Root, UnaryOp};
use crate::ty::Ty;

/// What a formula may read where it is checked: the bound roots' types, the fields' types by ID,
/// and which character functions are available.
#[derive(Debug, Clone, Default)]
pub struct Env {
    roots: FxHashMap<Root, Ty>,
    fields: FxHashMap<Arc<str>, Ty>,
    /// The type of the `copy` root in the copy aggregates; `None`: they are not available.
    copy: Option<Ty>,
    sum_fields: bool,
    families: bool,
}

impl Env {
    pub fn new() -> Env {
        Env::default()
    }

    pub fn with_root(mut self, root: Root, ty: Ty) -> Env {
        self.roots.insert(root, ty);
        self
    }

    pub fn with_field(mut self, id: &str, ty: Ty) -> Env {
        self.fields.insert(id.into(), ty);
        self
    }

    /// Makes the copy aggregates available, with `copy` of type `copy`.
    pub fn with_copies(mut self, copy: Ty) -> Env {
        self.copy = Some(copy);
        self
    }

    pub fn with_sum_fields(mut self) -> Env {
        self.sum_fields = true;
        self
    }

    pub fn with_families(mut self) -> Env {
        self.families = true;
        self
    }

    /// The environment that declares what a [`MapContext`] holds, with the types its values show;
    /// every character function is available.
    pub fn from_context(ctx: &MapContext) -> Env {
        let mut env = Env::new()
            .with_copies(Ty::open_map(Ty::Dyn))
            .with_sum_fields()
            .with_families();
        for (root, value) in ctx.roots() {
            env = env.with_root(root, Ty::of_value(value));
        }
        for (id, value) in ctx.fields() {
            env = env.with_field(id, Ty::of_value(value));
        }
        env
    }

    /// The view `sumFields` binds as `item`.
    fn field_view() -> Ty {
        Ty::record([
            ("id", Ty::String),
            ("type", Ty::String),
            ("tags", Ty::list(Ty::String)),
        ])
    }
}

/// The type of the formula's value, or every error found.
pub fn check(lowered: &Lowered, env: &Env) -> Result<Ty, Vec<FormulaError>> {
    let mut checker = Checker {
        lowered,
        env,
        bindings: Vec::new(),
        errors: Vec::new(),
    };
    let ty = checker.ty(lowered.root);
    if checker.errors.is_empty() {
        Ok(ty)
    } else {
        Err(checker.errors)
    }
}

struct Checker<'a> {
    lowered: &'a Lowered,
    env: &'a Env,
    bindings: Vec<(Root, Ty)>,
    errors: Vec<FormulaError>,
}

/// The result of an arithmetic operator on two (non-union, non-dyn) types.
fn arith(op: BinaryOp, a: &Ty, b: &Ty) -> Option<Ty> {
    use BinaryOp::*;
    Some(match (a, b) {
        (Ty::Int, Ty::Int) if op == Div => Ty::Decimal,
        (Ty::Int, Ty::Int) => Ty::Int,
        (Ty::Int | Ty::Decimal, Ty::Int | Ty::Decimal) => Ty::Decimal,
        (Ty::String, Ty::String) if op == Add => Ty::String,
        (Ty::Dice | Ty::Int, Ty::Dice | Ty::Int) if matches!(op, Add | Sub) => Ty::Dice,
        _ => return None,
    })
}

/// Whether every alternative of `ty` is an int.
fn all_int(ty: &Ty) -> bool {
    ty.alternatives().iter().all(|t| *t == Ty::Int)
}

impl Checker<'_> {
    fn range(&self, id: ExprId) -> TextRange {
        self.lowered.range(id)
    }

    fn error(&mut self, code: ErrorCode, id: ExprId, message: impl Into<String>) -> Ty {
        self.errors
            .push(FormulaError::new(code, message, self.range(id)));
        Ty::Dyn
    }

    /// Checks that `id` gives a value that fits `expected`; its type either way.
    fn expect(&mut self, id: ExprId, expected: &Ty, what: &str) -> Ty {
        let ty = self.ty(id);
        if !ty.fits(expected) {
            self.error(
                ErrorCode::TypeMismatch,
                id,
                format!("{what} needs {expected}, found {ty}"),
            );
        }
        ty
    }

    fn ty(&mut self, id: ExprId) -> Ty {
        let lowered = self.lowered;
        match &lowered.exprs[id] {
            Expr::Literal(value) => Ty::of_value(value),
            Expr::List(items) => {
                let tys: Vec<Ty> = items.iter().map(|&i| self.ty(i)).collect();
                if tys.is_empty() {
                    Ty::list(Ty::Dyn)
                } else {
                    Ty::list(Ty::union(tys))
                }
            }
            Expr::Root(root) => {
                if let Some((_, ty)) = self.bindings.iter().rev().find(|(r, _)| r == root) {
                    return ty.clone();
                }
                match self.env.roots.get(root) {
                    Some(ty) => ty.clone(),
                    None => self.error(
                        ErrorCode::UnknownName,
                        id,
                        format!("`{root}` is not bound here"),
                    ),
                }
            }
            Expr::Field(field) => match self.env.fields.get(field) {
                Some(ty) => ty.clone(),
                None => self.error(ErrorCode::UnknownName, id, format!("no field `{field}`")),
            },
            Expr::Member { base, name } => {
                let base_ty = self.ty(*base);
                let mut found = Vec::new();
                for alt in base_ty.alternatives() {
                    match alt {
                        Ty::Dyn => return Ty::Dyn,
                        Ty::Map(map) => match (map.members.get(name), &map.rest) {
                            (Some(t), _) => found.push(t.clone()),
                            (None, Some(rest)) => found.push((**rest).clone()),
                            (None, None) => {
                                return self.error(
                                    ErrorCode::UnknownName,
                                    id,
                                    format!("{alt} has no member `{name}`"),
                                );
                            }
                        },
                        other => {
                            return self.error(
                                ErrorCode::TypeMismatch,
                                id,
                                format!("`.{name}` needs a map, found {other}"),
                            );
                        }
                    }
                }
                Ty::union(found)
            }
            Expr::Index { base, index } => {
                let base_ty = self.ty(*base);
                let index_ty = self.ty(*index);
                let mut found = Vec::new();
                for alt in base_ty.alternatives() {
                    match alt {
                        Ty::Dyn => return Ty::Dyn,
                        Ty::List(element) if index_ty.fits(&Ty::Int) => {
                            found.push((**element).clone())
                        }
                        Ty::Map(map) if index_ty.fits(&Ty::String) => {
                            found.extend(map.members.values().cloned());
                            found.extend(map.rest.as_deref().cloned());
                        }
                        other => {
                            return self.error(
                                ErrorCode::TypeMismatch,
                                id,
                                format!("cannot index {other} with {index_ty}"),
                            );
                        }
                    }
                }
                Ty::union(found)
            }
            Expr::Unary {
                op: UnaryOp::Not,
                operand,
            } => {
                self.expect(*operand, &Ty::Bool, "`!`");
                Ty::Bool
            }
            Expr::Unary {
                op: UnaryOp::Neg,
                operand,
            } => {
                let ty = self.ty(*operand);
                if !ty.fits(&Ty::union([Ty::Int, Ty::Decimal, Ty::Dice])) {
                    return self.error(
                        ErrorCode::TypeMismatch,
                        id,
                        format!("`-` needs a number or dice, found {ty}"),
                    );
                }
                ty
            }
            Expr::Binary { op, lhs, rhs } => self.binary(id, *op, *lhs, *rhs),
            Expr::Conditional {
                cond,
                then,
                otherwise,
            } => {
                self.expect(*cond, &Ty::Bool, "a condition");
                let a = self.ty(*then);
                let b = self.ty(*otherwise);
                Ty::union([a, b])
            }
            Expr::Call { function, args } => self.call(id, *function, args),
            Expr::ComputedDice { count, .. } => {
                self.expect(*count, &Ty::Int, "a dice count");
                Ty::Dice
            }
        }
    }

    fn binary(&mut self, id: ExprId, op: BinaryOp, lhs: ExprId, rhs: ExprId) -> Ty {
        use BinaryOp::*;
        match op {
            And | Or => {
                self.expect(lhs, &Ty::Bool, &format!("`{}`", op.as_str()));
                self.expect(rhs, &Ty::Bool, &format!("`{}`", op.as_str()));
                Ty::Bool
            }
            Eq | Ne => {
                self.ty(lhs);
                self.ty(rhs);
                Ty::Bool
            }
            Lt | Le | Gt | Ge => {
                let what = format!("`{}`", op.as_str());
                self.expect(lhs, &Ty::number(), &what);
                self.expect(rhs, &Ty::number(), &what);
                Ty::Bool
            }
            In => {
                self.ty(lhs);
                self.expect(rhs, &Ty::list(Ty::Dyn), "the right of `in`");
                Ty::Bool
            }
            Add | Sub | Mul | Div | Rem => {
                let a = self.ty(lhs);
                let b = self.ty(rhs);
                if a.is_dyn() || b.is_dyn() {
                    return Ty::Dyn;
                }
                let mut results = Vec::new();
                for x in a.alternatives() {
                    for y in b.alternatives() {
                        match arith(op, x, y) {
                            Some(t) => results.push(t),
                            None => {
                                return self.error(
                                    ErrorCode::TypeMismatch,
                                    id,
                                    format!("cannot apply `{}` to {a} and {b}", op.as_str()),
                                );
                            }
                        }
                    }
                }
                Ty::union(results)
            }
        }
    }

    /// The type of a number-valued result over `tys`: int if all are ints, dyn if any is dyn (it is
    /// known only when evaluated), else decimal.
    fn numbers(&mut self, args: &[ExprId], what: &str) -> Ty {
        let mut ints = true;
        let mut dynamic = false;
        for &arg in args {
            let ty = self.expect(arg, &Ty::number(), what);
            ints &= all_int(&ty);
            dynamic |= ty == Ty::Dyn;
        }
        if dynamic {
            Ty::Dyn
        } else if ints {
            Ty::Int
        } else {
            Ty::Decimal
        }
    }

    fn bound(&mut self, root: Root, ty: Ty, id: ExprId) -> Ty {
        self.bindings.push((root, ty));
        let result = self.ty(id);
        self.bindings.pop();
        result
    }

    fn bound_bool(&mut self, root: Root, ty: Ty, id: ExprId, what: &str) {
        let result = self.bound(root, ty, id);
        if !result.fits(&Ty::Bool) {
            self.error(
                ErrorCode::TypeMismatch,
                id,
                format!("{what} needs bool, found {result}"),
            );
        }
    }

    fn call(&mut self, id: ExprId, function: Function, args: &[ExprId]) -> Ty {
        let arity = function.arity();
        if args.len() < arity.min || arity.max.is_some_and(|max| args.len() > max) {
            for &arg in args {
                self.ty(arg);
            }
            let wanted = match arity.max {
                Some(max) if max == arity.min => format!("{max}"),
                Some(max) => format!("{} to {max}", arity.min),
                None => format!("at least {}", arity.min),
            };
            return self.error(
                ErrorCode::TypeMismatch,
                id,
                format!(
                    "{function}() takes {wanted} arguments, found {}",
                    args.len()
                ),
            );
        }
        let what = format!("{function}()");
        match function {
            Function::Has => {
                if !self.lowered.exprs[args[0]].is_path(self.lowered) {
                    self.error(ErrorCode::TypeMismatch, args[0], "has() needs a path");
                }
                self.ty(args[0]);
                Ty::Bool
            }
            Function::Size => {
                let list_map_string =
                    Ty::union([Ty::list(Ty::Dyn), Ty::open_map(Ty::Dyn), Ty::String]);
                self.expect(args[0], &list_map_string, &what);
                Ty::Int
            }
            Function::Min | Function::Max => self.numbers(args, &what),
            Function::Floor | Function::Ceil | Function::Round => {
                self.expect(args[0], &Ty::number(), &what);
                Ty::Int
            }
            Function::Abs => {
                let ty = self.expect(args[0], &Ty::number(), &what);
                if ty.fits(&Ty::number()) { ty } else { Ty::Dyn }
            }
            Function::String => {
                let printable = Ty::union([Ty::Int, Ty::Decimal, Ty::Bool, Ty::String, Ty::Dice]);
                self.expect(args[0], &printable, &what);
                Ty::String
            }
            Function::IndexOf => {
                self.expect(args[0], &Ty::list(Ty::Dyn), &what);
                self.ty(args[1]);
                Ty::Int
            }
            Function::DieOf => {
                self.expect(args[0], &Ty::Dice, &what);
                Ty::Dice
            }
            Function::MaxOf | Function::MinOf => {
                self.expect(args[0], &Ty::union([Ty::Dice, Ty::Int]), &what);
                Ty::Int
            }
            Function::Sum => {
                let ty = self.expect(args[0], &Ty::list(Ty::number()), &what);
                match ty {
                    Ty::List(element) if all_int(&element) => Ty::Int,
                    Ty::List(element) if element.is_dyn() => Ty::number(),
                    _ => Ty::Decimal,
                }
            }
            Function::Any | Function::All | Function::Filter | Function::Map | Function::Count => {
                let list = self.expect(args[0], &Ty::list(Ty::Dyn), &what);
                let element = match list {
                    Ty::List(element) => *element,
                    _ => Ty::Dyn,
                };
                if function == Function::Map {
                    return Ty::list(self.bound(Root::X, element, args[1]));
                }
                self.bound_bool(Root::X, element.clone(), args[1], &what);
                match function {
                    Function::Filter => Ty::list(element),
                    Function::Count => Ty::Int,
                    _ => Ty::Bool,
                }
            }
            Function::CountCopies
            | Function::SumCopies
            | Function::MaxCopies
            | Function::MinCopies => {
                let Some(copy) = self.env.copy.clone() else {
                    return self.error(
                        ErrorCode::UnknownName,
                        id,
                        format!("{function}() is not available here"),
                    );
                };
                if function == Function::CountCopies {
                    self.bound_bool(Root::Copy, copy, args[0], &what);
                    return Ty::Int;
                }
                if let Some(&where_arg) = args.get(1) {
                    self.bound_bool(Root::Copy, copy.clone(), where_arg, &what);
                }
                let value = self.bound(Root::Copy, copy, args[0]);
                if !value.fits(&Ty::number()) {
                    return self.error(
                        ErrorCode::TypeMismatch,
                        args[0],
                        format!("{what} needs a number, found {value}"),
                    );
                }
                if value == Ty::Dyn {
                    Ty::Dyn
                } else if all_int(&value) {
                    Ty::Int
                } else {
                    Ty::number()
                }
            }
            Function::SumFields => {
                if !self.env.sum_fields {
                    return self.error(
                        ErrorCode::UnknownName,
                        id,
                        "sumFields() is not available here",
                    );
                }
                self.bound_bool(Root::Item, Env::field_view(), args[0], &what);
                Ty::number()
            }
            Function::FieldOf => {
                if !self.env.families {
                    return self.error(
                        ErrorCode::UnknownName,
                        id,
                        "fieldOf() is not available here",
                    );
                }
                for &arg in args {
                    self.expect(arg, &Ty::String, &what);
                }
                Ty::Dyn
            }
        }
    }
}
