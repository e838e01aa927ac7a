//! The evaluator: walks a [`Lowered`] formula, asking a [`Context`] for roots and fields as it
//! reaches them. Operators and functions follow `docs/spec/formulas.md`, Semantics.

use std::cmp::Ordering;
use std::sync::Arc;

use ocf_dice::value::{DiceTerm, DiceValue};

use crate::arith::{self, NumberOp};
use crate::context::Context;
use crate::decimal::{ArithError, Decimal, Millionths};
use crate::dice_fns;
use crate::error::{ErrorCode, FormulaError, TextRange};
use crate::limits::Limits;
use crate::lowered::{BinaryOp, Expr, ExprId, Function, Lowered, Root, UnaryOp};
use crate::value::Value;

/// Evaluates a lowered formula.
pub fn evaluate(lowered: &Lowered, ctx: &dyn Context, limits: &Limits) -> Result<Value> {
    let mut ev = Evaluator {
        lowered,
        ctx,
        limits,
        bindings: Vec::new(),
        steps: 0,
    };
    ev.eval(lowered.root)
}

struct Evaluator<'a> {
    lowered: &'a Lowered,
    ctx: &'a dyn Context,
    limits: &'a Limits,
    /// Roots bound by list functions, copy aggregates and `sumFields`, innermost last.
    bindings: Vec<(Root, Value)>,
    steps: u64,
}

type Result<T> = std::result::Result<T, FormulaError>;

fn mismatch(range: TextRange, message: impl Into<String>) -> FormulaError {
    FormulaError::new(ErrorCode::TypeMismatch, message, range)
}

fn arith_error(e: ArithError, range: TextRange) -> FormulaError {
    match e {
        ArithError::Overflow => FormulaError::new(
            ErrorCode::ArithmeticOverflow,
            "the result is out of range",
            range,
        ),
        ArithError::DivisionByZero => {
            FormulaError::new(ErrorCode::DivisionByZero, "division by zero", range)
        }
    }
}

fn overflow(range: TextRange) -> FormulaError {
    arith_error(ArithError::Overflow, range)
}

/// A number as exact millionths, for decimal arithmetic: an int takes part whatever its size, and
/// only the result is checked against the decimal range.
fn wide(value: &Value, range: TextRange) -> Result<Millionths> {
    value.as_millionths().ok_or_else(|| {
        mismatch(
            range,
            format!("expected a number, found {}", value.type_name()),
        )
    })
}

fn absent(range: TextRange) -> FormulaError {
    FormulaError::new(
        ErrorCode::NoSuchKey,
        "this path is absent; guard it with has()",
        range,
    )
}

/// `x op y` for two ints, the common case, without widening to millionths: the same results as
/// [`Evaluator::binary`] gives (ints stay ints, checked), or `None` for what needs the general
/// path (`/`, whose result is a decimal; `in`, `&&`, `||`).
fn int_binary(op: BinaryOp, x: i64, y: i64) -> Option<std::result::Result<Value, ArithError>> {
    use BinaryOp::*;
    let int = |n: Option<i64>| Some(n.map(Value::Int).ok_or(ArithError::Overflow));
    match op {
        Add => int(x.checked_add(y)),
        Sub => int(x.checked_sub(y)),
        Mul => int(x.checked_mul(y)),
        Eq => Some(Ok(Value::Bool(x == y))),
        Ne => Some(Ok(Value::Bool(x != y))),
        Lt => Some(Ok(Value::Bool(x < y))),
        Le => Some(Ok(Value::Bool(x <= y))),
        Gt => Some(Ok(Value::Bool(x > y))),
        Ge => Some(Ok(Value::Bool(x >= y))),
        Rem | Div | In | And | Or => None,
    }
}

/// Compares two numbers exactly, an int against a decimal included.
fn compare_numbers(a: &Value, b: &Value) -> Option<Ordering> {
    Some(a.as_millionths()?.cmp(&b.as_millionths()?))
}

impl Evaluator<'_> {
    fn range(&self, id: ExprId) -> TextRange {
        self.lowered.range(id)
    }

    fn step(&mut self, id: ExprId) -> Result<()> {
        self.steps += 1;
        if self.steps > self.limits.max_steps {
            return Err(FormulaError::new(
                ErrorCode::SafetyLimitExceeded,
                format!("evaluation took more than {} steps", self.limits.max_steps),
                self.range(id),
            ));
        }
        Ok(())
    }

    /// The value of an expression; reading an absent path is `no-such-key`.
    fn eval(&mut self, id: ExprId) -> Result<Value> {
        self.step(id)?;
        let lowered = self.lowered;
        // The range is looked up only where an error needs it: most evaluations never fail.
        let range = || lowered.range(id);
        match &lowered.exprs[id] {
            Expr::Literal(value) => Ok(value.clone()),
            Expr::List(items) => {
                self.check_list_len(items.len(), range())?;
                let values = items
                    .iter()
                    .map(|&item| self.eval(item))
                    .collect::<Result<_>>()?;
                Ok(Value::list(values))
            }
            // A field is the most common leaf: read it here rather than through `place`.
            Expr::Field(field) => match self.ctx.field_at(id, field) {
                Ok(Some(value)) => Ok(value),
                Ok(None) => Err(absent(range())),
                Err(e) => Err(e.at(range())),
            },
            Expr::Root(_) | Expr::Member { .. } | Expr::Index { .. } => match self.place(id)? {
                Some(value) => Ok(value),
                None => Err(absent(range())),
            },
            Expr::Unary { op, operand } => {
                let value = self.eval(*operand)?;
                unary(*op, value, range())
            }
            // Rust's `&&` and `||` skip the right operand just as the formula language does.
            Expr::Binary {
                op: BinaryOp::And,
                lhs,
                rhs,
            } => Ok(Value::Bool(self.eval_bool(*lhs)? && self.eval_bool(*rhs)?)),
            Expr::Binary {
                op: BinaryOp::Or,
                lhs,
                rhs,
            } => Ok(Value::Bool(self.eval_bool(*lhs)? || self.eval_bool(*rhs)?)),
            Expr::Binary { op, lhs, rhs } => {
                let a = self.eval(*lhs)?;
                let b = self.eval(*rhs)?;
                if let (Value::Int(x), Value::Int(y)) = (&a, &b)
                    && let Some(result) = int_binary(*op, *x, *y)
                {
                    return result.map_err(|e| arith_error(e, range()));
                }
                self.binary(*op, a, b, range())
            }
            Expr::Conditional {
                cond,
                then,
                otherwise,
            } => {
                if self.eval_bool(*cond)? {
                    self.eval(*then)
                } else {
                    self.eval(*otherwise)
                }
            }
            Expr::Call { function, args } => self.call(*function, args, range()),
            Expr::ComputedDice {
                count,
                die,
                modifiers,
            } => {
                let n = match self.eval(*count)? {
                    Value::Int(n) => n,
                    other => {
                        return Err(mismatch(
                            self.range(*count),
                            format!("a dice count must be an int, found {}", other.type_name()),
                        ));
                    }
                };
                if n < 0 {
                    return Err(mismatch(
                        self.range(*count),
                        format!("negative dice count {n}"),
                    ));
                }
                let max = self.limits.max_dice_count;
                let n = u32::try_from(n).ok().filter(|&n| n <= max).ok_or_else(|| {
                    FormulaError::new(
                        ErrorCode::SafetyLimitExceeded,
                        format!("dice count {n} is above the limit of {max}"),
                        self.range(*count),
                    )
                })?;
                if n == 0 {
                    return Ok(Value::dice(DiceValue::default()));
                }
                Ok(Value::dice(DiceValue::from_term(DiceTerm::new(
                    n,
                    *die,
                    modifiers.clone(),
                ))))
            }
        }
    }

    fn eval_bool(&mut self, id: ExprId) -> Result<bool> {
        match self.eval(id)? {
            Value::Bool(b) => Ok(b),
            other => Err(mismatch(
                self.range(id),
                format!("expected a bool, found {}", other.type_name()),
            )),
        }
    }

    fn check_list_len(&self, len: usize, range: TextRange) -> Result<()> {
        if len > self.limits.max_list_len {
            return Err(FormulaError::new(
                ErrorCode::SafetyLimitExceeded,
                format!(
                    "a list of {len} elements is above the limit of {}",
                    self.limits.max_list_len
                ),
                range,
            ));
        }
        Ok(())
    }

    fn check_string_len(&self, s: String, range: TextRange) -> Result<Value> {
        if s.len() > self.limits.max_string_len {
            return Err(FormulaError::new(
                ErrorCode::SafetyLimitExceeded,
                format!(
                    "a string of {} bytes is above the limit of {}",
                    s.len(),
                    self.limits.max_string_len
                ),
                range,
            ));
        }
        Ok(Value::string(s))
    }

    /// The value of a path, or `None` if it is absent. Absence spreads: a member of an absent
    /// value is absent.
    fn place(&mut self, id: ExprId) -> Result<Option<Value>> {
        let lowered = self.lowered;
        let range = || lowered.range(id);
        match &lowered.exprs[id] {
            Expr::Root(root) => {
                if let Some((_, value)) = self.bindings.iter().rev().find(|(r, _)| r == root) {
                    return Ok(Some(value.clone()));
                }
                self.ctx.root(*root).map_err(|e| e.at(range()))
            }
            Expr::Field(field) => self.ctx.field_at(id, field).map_err(|e| e.at(range())),
            Expr::Member { base, name } => {
                self.step(id)?;
                // A member of a root the formula doesn't bind, which the context may tell alone.
                if let Expr::Root(root) = &lowered.exprs[*base]
                    && !self.bindings.iter().any(|(r, _)| r == root)
                    && let Some(member) = self.ctx.root_member(*root, name)
                {
                    return member.map_err(|e| e.at(lowered.range(*base)));
                }
                match self.place(*base)? {
                    None => Ok(None),
                    Some(Value::Map(members)) => Ok(members.get(name).cloned()),
                    Some(other) => Err(mismatch(
                        range(),
                        format!("`.{name}` needs a map, found {}", other.type_name()),
                    )),
                }
            }
            Expr::Index { base, index } => {
                self.step(id)?;
                let Some(container) = self.place(*base)? else {
                    return Ok(None);
                };
                let key = self.eval(*index)?;
                match (&container, &key) {
                    (Value::List(items), Value::Int(i)) => {
                        Ok(usize::try_from(*i).ok().and_then(|i| items.get(i)).cloned())
                    }
                    (Value::Map(members), Value::String(name)) => Ok(members.get(name).cloned()),
                    _ => Err(mismatch(
                        range(),
                        format!(
                            "cannot index a {} with a {}",
                            container.type_name(),
                            key.type_name()
                        ),
                    )),
                }
            }
            _ => self.eval(id).map(Some),
        }
    }

    fn binary(&self, op: BinaryOp, a: Value, b: Value, range: TextRange) -> Result<Value> {
        use BinaryOp::*;
        let types_mismatch = |a: &Value, b: &Value| {
            mismatch(
                range,
                format!(
                    "cannot apply `{}` to {} and {}",
                    op.as_str(),
                    a.type_name(),
                    b.type_name()
                ),
            )
        };
        match op {
            Eq => Ok(Value::Bool(a.equals(&b))),
            Ne => Ok(Value::Bool(!a.equals(&b))),
            Lt | Le | Gt | Ge => {
                let ord = compare_numbers(&a, &b).ok_or_else(|| types_mismatch(&a, &b))?;
                Ok(Value::Bool(match op {
                    Lt => ord.is_lt(),
                    Le => ord.is_le(),
                    Gt => ord.is_gt(),
                    _ => ord.is_ge(),
                }))
            }
            In => match &b {
                Value::List(items) => Ok(Value::Bool(items.iter().any(|item| item.equals(&a)))),
                _ => Err(mismatch(
                    range,
                    format!("`in` needs a list on its right, found {}", b.type_name()),
                )),
            },
            Add | Sub | Mul | Div | Rem => match (&a, &b) {
                (Value::Int(_) | Value::Decimal(_), Value::Int(_) | Value::Decimal(_)) => {
                    let op = match op {
                        Add => NumberOp::Add,
                        Sub => NumberOp::Sub,
                        Mul => NumberOp::Mul,
                        Div => NumberOp::Div,
                        _ => NumberOp::Rem,
                    };
                    arith::apply(op, &a, &b)
                        .expect("both are numbers")
                        .map_err(|e| arith_error(e, range))
                }
                (Value::String(x), Value::String(y)) if op == Add => {
                    let mut s = String::with_capacity(x.len() + y.len());
                    s.push_str(x);
                    s.push_str(y);
                    self.check_string_len(s, range)
                }
                (Value::Dice(_) | Value::Int(_), Value::Dice(_) | Value::Int(_))
                    if matches!(op, Add | Sub) =>
                {
                    let as_dice = |v: &Value| match v {
                        Value::Dice(d) => (**d).clone(),
                        Value::Int(n) => DiceValue::flat(*n),
                        _ => DiceValue::default(),
                    };
                    let (x, mut y) = (as_dice(&a), as_dice(&b));
                    if op == Sub {
                        y = y.negate().map_err(|_| overflow(range))?;
                    }
                    x.add(&y).map(Value::dice).map_err(|_| overflow(range))
                }
                _ => Err(types_mismatch(&a, &b)),
            },
            And | Or => unreachable!("short-circuit operators are evaluated in `eval`"),
        }
    }

    fn call(&mut self, function: Function, args: &[ExprId], range: TextRange) -> Result<Value> {
        let arity = function.arity();
        if args.len() < arity.min || arity.max.is_some_and(|max| args.len() > max) {
            return Err(mismatch(
                range,
                format!("wrong number of arguments to {function}()"),
            ));
        }
        match function {
            Function::Has => {
                let arg = args[0];
                if !self.lowered.exprs[arg].is_path(self.lowered) {
                    return Err(mismatch(self.range(arg), "has() needs a path"));
                }
                Ok(Value::Bool(self.place(arg)?.is_some()))
            }
            Function::CountCopies
            | Function::SumCopies
            | Function::MaxCopies
            | Function::MinCopies => {
                let copies = self.ctx.copies().map_err(|e| e.at(range))?;
                self.aggregate(function, Root::Copy, copies, args, range)
            }
            Function::SumFields => self.sum_fields(args[0], range),
            Function::Any | Function::All | Function::Filter | Function::Map | Function::Count => {
                let list = match self.eval(args[0])? {
                    Value::List(items) => items,
                    other => {
                        return Err(mismatch(
                            self.range(args[0]),
                            format!("{function}() needs a list, found {}", other.type_name()),
                        ));
                    }
                };
                self.list_function(function, &list, args[1], range)
            }
            Function::Min | Function::Max => self.min_max(function == Function::Max, args, range),
            _ => {
                // Most calls take a few arguments: gathered on the stack.
                let values = args
                    .iter()
                    .map(|&a| self.eval(a))
                    .collect::<Result<smallvec::SmallVec<[Value; 4]>>>()?;
                self.plain_call(function, &values, args, range)
            }
        }
    }

    /// `max(a, b, ...)` / `min(...)`, argument by argument with no list: every argument is
    /// evaluated in order (an error in a later one still fails the call), the best kept, and the
    /// result is a decimal if any argument is ([`extreme`]'s rule).
    fn min_max(&mut self, largest: bool, args: &[ExprId], range: TextRange) -> Result<Value> {
        let mut best: Option<Value> = None;
        let mut any_decimal = false;
        // The first argument that is not a number, reported once all are evaluated.
        let mut wrong: Option<FormulaError> = None;
        for &arg in args {
            let value = self.eval(arg)?;
            match value {
                Value::Int(_) => {}
                Value::Decimal(_) => any_decimal = true,
                _ => {
                    if wrong.is_none() {
                        wrong = Some(mismatch(
                            self.range(arg),
                            format!("expected a number, found {}", value.type_name()),
                        ));
                    }
                    continue;
                }
            }
            if wrong.is_some() {
                continue;
            }
            let better = match &best {
                None => true,
                Some(b) => {
                    let ord = compare_numbers(&value, b).unwrap_or(Ordering::Equal);
                    (largest && ord.is_gt()) || (!largest && ord.is_lt())
                }
            };
            if better {
                best = Some(value);
            }
        }
        if let Some(error) = wrong {
            return Err(error);
        }
        match best {
            Some(Value::Int(n)) if any_decimal => Decimal::from_int(n)
                .map(Value::Decimal)
                .map_err(|e| arith_error(e, range)),
            Some(v) => Ok(v),
            None => Ok(Value::Int(0)),
        }
    }

    /// Evaluates `body` with `root` bound to `value`.
    fn with_binding<T>(
        &mut self,
        root: Root,
        value: Value,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        self.bindings.push((root, value));
        let result = f(self);
        self.bindings.pop();
        result
    }

    /// `countCopies(where)`, `sumCopies(value[, where])`, `maxCopies(...)`, `minCopies(...)`.
    fn aggregate(
        &mut self,
        function: Function,
        root: Root,
        copies: Vec<Value>,
        args: &[ExprId],
        range: TextRange,
    ) -> Result<Value> {
        let (value_arg, where_arg) = match function {
            Function::CountCopies => (None, Some(args[0])),
            _ => (Some(args[0]), args.get(1).copied()),
        };
        let mut count: i64 = 0;
        let mut numbers = Vec::new();
        for copy in copies {
            let picked = self.with_binding(root, copy, |ev| {
                if let Some(w) = where_arg
                    && !ev.eval_bool(w)?
                {
                    return Ok(None);
                }
                match value_arg {
                    Some(v) => Ok(Some(Some(ev.eval(v)?))),
                    None => Ok(Some(None)),
                }
            })?;
            match picked {
                None => {}
                Some(None) => count += 1,
                Some(Some(value)) => numbers.push((value, value_arg.map(|v| self.range(v)))),
            }
        }
        if function == Function::CountCopies {
            return Ok(Value::Int(count));
        }
        let values: Vec<(Value, TextRange)> = numbers
            .into_iter()
            .map(|(v, r)| (v, r.unwrap_or(range)))
            .collect();
        match function {
            Function::SumCopies => sum_numbers(&values, range),
            // No copies: the empty start value of a number, 0 (EC).
            _ if values.is_empty() => Ok(Value::Int(0)),
            _ => extreme(&values, function == Function::MaxCopies, range),
        }
    }

    /// `sumFields(where)`: the sum of the number fields whose view `{ id, type, tags }`, bound as
    /// `item` as in a field-set query, matches `where`.
    fn sum_fields(&mut self, where_arg: ExprId, range: TextRange) -> Result<Value> {
        let views = self.ctx.field_views().map_err(|e| e.at(range))?;
        let mut values = Vec::new();
        for view in views {
            let Value::Map(members) = &view else { continue };
            let is_number = matches!(
                members.get("type"),
                Some(Value::String(t)) if &**t == "integer" || &**t == "decimal"
            );
            let Some(Value::String(id)) = members.get("id").cloned() else {
                continue;
            };
            if !is_number || !self.with_binding(Root::Item, view, |ev| ev.eval_bool(where_arg))? {
                continue;
            }
            if let Some(value) = self.ctx.field(&id).map_err(|e| e.at(range))? {
                values.push((value, range));
            }
        }
        sum_numbers(&values, range)
    }

    fn list_function(
        &mut self,
        function: Function,
        list: &Arc<Vec<Value>>,
        body: ExprId,
        range: TextRange,
    ) -> Result<Value> {
        let mut kept = Vec::new();
        for item in list.iter() {
            let result = self.with_binding(Root::X, item.clone(), |ev| match function {
                Function::Map => ev.eval(body),
                _ => ev.eval_bool(body).map(Value::Bool),
            })?;
            match (function, result) {
                (Function::Any, Value::Bool(true)) => return Ok(Value::Bool(true)),
                (Function::All, Value::Bool(false)) => return Ok(Value::Bool(false)),
                (Function::Filter | Function::Count, Value::Bool(true)) => kept.push(item.clone()),
                (Function::Map, value) => kept.push(value),
                _ => {}
            }
        }
        Ok(match function {
            Function::Any => Value::Bool(false),
            Function::All => Value::Bool(true),
            Function::Count => Value::Int(kept.len() as i64),
            _ => {
                self.check_list_len(kept.len(), range)?;
                Value::list(kept)
            }
        })
    }

    /// The functions that take their arguments as values.
    fn plain_call(
        &self,
        function: Function,
        args: &[Value],
        arg_ids: &[ExprId],
        range: TextRange,
    ) -> Result<Value> {
        // An argument's range is looked up only for its error.
        let wrong = |i: usize, wanted: &str| {
            mismatch(
                self.range(arg_ids[i]),
                format!("{function}() needs {wanted}, found {}", args[i].type_name()),
            )
        };
        match function {
            Function::Size => match &args[0] {
                Value::List(items) => Ok(Value::Int(items.len() as i64)),
                Value::Map(members) => Ok(Value::Int(members.len() as i64)),
                Value::String(s) => Ok(Value::Int(s.chars().count() as i64)),
                _ => Err(wrong(0, "a list, map or string")),
            },
            Function::Floor | Function::Ceil | Function::Round => match &args[0] {
                Value::Int(n) => Ok(Value::Int(*n)),
                Value::Decimal(d) => Ok(Value::Int(match function {
                    Function::Floor => d.floor(),
                    Function::Ceil => d.ceil(),
                    _ => d.round(),
                })),
                _ => Err(wrong(0, "a number")),
            },
            Function::Abs => match &args[0] {
                Value::Int(n) => n
                    .checked_abs()
                    .map(Value::Int)
                    .ok_or_else(|| overflow(range)),
                Value::Decimal(d) => d
                    .abs()
                    .map(Value::Decimal)
                    .map_err(|e| arith_error(e, range)),
                _ => Err(wrong(0, "a number")),
            },
            Function::String => {
                let text = match &args[0] {
                    Value::String(s) => return Ok(Value::String(s.clone())),
                    Value::Int(n) => n.to_string(),
                    Value::Decimal(d) => d.to_string(),
                    Value::Bool(b) => b.to_string(),
                    Value::Dice(d) => d.to_string(),
                    _ => return Err(wrong(0, "an int, decimal, bool, string or dice")),
                };
                self.check_string_len(text, range)
            }
            Function::IndexOf => match &args[0] {
                Value::List(items) => Ok(Value::Int(
                    items
                        .iter()
                        .position(|item| item.equals(&args[1]))
                        .map_or(-1, |i| i as i64),
                )),
                _ => Err(wrong(0, "a list")),
            },
            Function::DieOf => match &args[0] {
                Value::Dice(d) => Ok(Value::dice(dice_fns::die_of(d))),
                _ => Err(wrong(0, "dice")),
            },
            Function::MaxOf | Function::MinOf => match &args[0] {
                Value::Int(n) => Ok(Value::Int(*n)),
                Value::Dice(d) => {
                    let (lo, hi) = dice_fns::bounds(d).map_err(|_| overflow(range))?;
                    Ok(Value::Int(if function == Function::MaxOf {
                        hi
                    } else {
                        lo
                    }))
                }
                _ => Err(wrong(0, "dice")),
            },
            Function::Sum => match &args[0] {
                Value::List(items) => {
                    let at = self.range(arg_ids[0]);
                    let values: Vec<_> = items.iter().map(|v| (v.clone(), at)).collect();
                    sum_numbers(&values, range)
                }
                _ => Err(wrong(0, "a list")),
            },
            Function::FieldOf => {
                let mut names = Vec::with_capacity(3);
                for (i, arg) in args.iter().enumerate() {
                    match arg {
                        Value::String(s) => names.push(s.clone()),
                        _ => return Err(wrong(i, "a string")),
                    }
                }
                match self
                    .ctx
                    .family_field(&names[0], &names[1], &names[2])
                    .map_err(|e| e.at(range))?
                {
                    Some(value) => Ok(value),
                    None => Err(FormulaError::new(
                        ErrorCode::NoSuchKey,
                        format!(
                            "`{}` of `{}` has no field `{}`",
                            names[0], names[1], names[2]
                        ),
                        range,
                    )),
                }
            }
            Function::Has
            | Function::Min
            | Function::Max
            | Function::CountCopies
            | Function::SumCopies
            | Function::MaxCopies
            | Function::MinCopies
            | Function::SumFields
            | Function::Any
            | Function::All
            | Function::Filter
            | Function::Map
            | Function::Count => unreachable!("{function}() is evaluated in `call`"),
        }
    }
}

fn unary(op: UnaryOp, value: Value, range: TextRange) -> Result<Value> {
    match (op, &value) {
        (UnaryOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
        (UnaryOp::Neg, Value::Int(n)) => n
            .checked_neg()
            .map(Value::Int)
            .ok_or_else(|| overflow(range)),
        (UnaryOp::Neg, Value::Decimal(d)) => d
            .checked_neg()
            .map(Value::Decimal)
            .map_err(|e| arith_error(e, range)),
        (UnaryOp::Neg, Value::Dice(d)) => d.negate().map(Value::dice).map_err(|_| overflow(range)),
        (UnaryOp::Not, _) => Err(mismatch(
            range,
            format!("`!` needs a bool, found {}", value.type_name()),
        )),
        (UnaryOp::Neg, _) => Err(mismatch(
            range,
            format!("`-` needs a number or dice, found {}", value.type_name()),
        )),
    }
}

/// The sum of numbers: an int if all are ints, else a decimal. An empty sum is `0`. The sum is
/// kept wide and only the total is checked against its type's range, as for one operator: the
/// result is the total, whatever order the parts come in (decisions.md).
fn sum_numbers(values: &[(Value, TextRange)], range: TextRange) -> Result<Value> {
    let mut total = Millionths::ZERO;
    let mut all_ints = true;
    for (value, r) in values {
        all_ints &= matches!(value, Value::Int(_));
        total = total
            .checked_add(wide(value, *r)?)
            .map_err(|e| arith_error(e, range))?;
    }
    if all_ints {
        // A sum of ints is a whole number of millionths.
        i64::try_from(total.get() / 1_000_000)
            .map(Value::Int)
            .map_err(|_| overflow(range))
    } else {
        total
            .to_decimal()
            .map(Value::Decimal)
            .map_err(|e| arith_error(e, range))
    }
}

/// The largest (or smallest) of some numbers: an int if all are ints, else a decimal (`max(3, 2.5)`
/// is `3.0`), so that the result's type does not depend on the values. An int chosen where the
/// result is a decimal must fit the decimal range: the call's result is out of range otherwise.
fn extreme(values: &[(Value, TextRange)], largest: bool, range: TextRange) -> Result<Value> {
    let mut best: Option<&Value> = None;
    for (value, r) in values {
        if !matches!(value, Value::Int(_) | Value::Decimal(_)) {
            return Err(mismatch(
                *r,
                format!("expected a number, found {}", value.type_name()),
            ));
        }
        best = match best {
            None => Some(value),
            Some(b) => {
                let ord = compare_numbers(value, b).unwrap_or(Ordering::Equal);
                if (largest && ord.is_gt()) || (!largest && ord.is_lt()) {
                    Some(value)
                } else {
                    Some(b)
                }
            }
        };
    }
    match best {
        Some(Value::Int(n)) if values.iter().any(|(v, _)| matches!(v, Value::Decimal(_))) => {
            Decimal::from_int(*n)
                .map(Value::Decimal)
                .map_err(|e| arith_error(e, range))
        }
        Some(v) => Ok(v.clone()),
        None => Ok(Value::Int(0)),
    }
}
