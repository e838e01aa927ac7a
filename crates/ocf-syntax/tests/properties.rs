//! Property tests: the parser never panics and is lossless on any text, and on formulas generated
//! from the grammar it finds no error, parses the structure the generator meant, and printing is
//! stable.

use ocf_syntax::ast::{AstNode, Expr, LiteralKind};
use ocf_syntax::{SyntaxKind, SyntaxNode, dice, parse, printer, quote_string};
use proptest::prelude::*;

// Any text ------------------------------------------------------------------------------------------

/// Checks what holds for every parse: lossless, errors inside the text, a bounded tree, and the
/// AST and printer are safe on it.
fn check_any(text: &str) {
    let parse = parse(text);
    let root = parse.syntax_node();
    assert_eq!(root.text().to_string(), text);
    for error in &parse.errors {
        assert!(usize::from(error.range.end()) <= text.len());
        assert!(text.is_char_boundary(error.range.start().into()));
        assert!(text.is_char_boundary(error.range.end().into()));
        assert!(!error.message.is_empty());
    }
    let printed = parse.root().expr().map(|expr| printer::print(&expr));
    if parse.errors.is_empty() {
        let printed = printed.expect("a formula without errors has an expression");
        assert_eq!(
            printer::print_formula(&ocf_syntax::parse(&printed)),
            Some(printed)
        );
    }
}

const FRAGMENTS: &[&str] = &[
    "(", ")", "[", "]", ",", ".", "?", ":", "&&", "&", "||", "|", "!", "-", "+", "*", "/", "%",
    "==", "!=", "<", "<=", ">", ">=", "=", " ", "\n", "in", "true", "null", "x", "self", "f(", "1",
    "0.5", "1.", "2d6", "2d6kh1", "d6", "d6kh", "1d0", "4dF", "1d%", "!>4", "'a'", "'", "\"", "\\",
    "\\u{", "'it\\'s'", "#", "é", "\u{0}", "_a1",
];

fn fragments() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..60).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_string_parses_losslessly(text in any::<String>()) {
        check_any(&text);
    }

    #[test]
    fn formula_like_strings_parse_losslessly(text in fragments()) {
        check_any(&text);
    }
}

// Generated formulas --------------------------------------------------------------------------------

/// A well-formed formula, as the test means it; rendered with [`render`].
#[derive(Debug, Clone)]
enum Gen {
    Int(String),
    Decimal(String),
    Str {
        value: String,
        double: bool,
    },
    Word(&'static str),
    Dice(&'static str),
    Name(String),
    Field(Box<Gen>, String),
    Index(Box<Gen>, Box<Gen>),
    Call(String, Vec<Gen>),
    Prefix(&'static str, Box<Gen>),
    Bin(&'static str, Box<Gen>, Box<Gen>),
    Ternary(Box<Gen>, Box<Gen>, Box<Gen>),
    List {
        items: Vec<Gen>,
        trailing_comma: bool,
    },
    Computed(Box<Gen>, &'static str),
    Paren(Box<Gen>),
}

/// Dice as written, with their canonical notation.
const DICE: &[(&str, &str)] = &[
    ("1d6", "1d6"),
    ("2d20kh", "2d20kh1"),
    ("4d6dl1", "4d6dl1"),
    ("1d6!", "1d6!"),
    ("1d6!5", "1d6!5"),
    ("1d20ro<2", "1d20ro<2"),
    ("5d6cs>=5", "5d6cs>=5"),
    ("1d20min10", "1d20min10"),
    ("1d%", "1d%"),
    ("4dFcs>=-1", "4dFcs>=-1"),
];
const SUFFIXES: &[(&str, &str)] = &[
    ("d6", "d6"),
    ("d6kh", "d6kh1"),
    ("dF", "dF"),
    ("d10!!", "d10!!"),
];
const BINARY: &[(&str, u8)] = &[
    ("||", 2),
    ("&&", 3),
    ("==", 4),
    ("!=", 4),
    ("<", 5),
    ("<=", 5),
    (">", 5),
    (">=", 5),
    ("in", 5),
    ("+", 6),
    ("-", 6),
    ("*", 7),
    ("/", 7),
    ("%", 7),
];

fn level(op: &str) -> u8 {
    BINARY
        .iter()
        .find(|(o, _)| *o == op)
        .map(|(_, l)| *l)
        .unwrap()
}

/// How tightly an expression holds together: 1 ternary ... 7 multiplicative, 8 prefix, 9 postfix,
/// 10 atoms.
fn precedence(g: &Gen) -> u8 {
    match g {
        Gen::Ternary(..) => 1,
        Gen::Bin(op, ..) => level(op),
        Gen::Prefix(..) => 8,
        Gen::Field(..) | Gen::Index(..) | Gen::Call(..) => 9,
        _ => 10,
    }
}

fn name() -> impl Strategy<Value = String> {
    "[a-z_][a-zA-Z0-9_]{0,6}"
        .prop_filter("not a keyword", |s| SyntaxKind::from_keyword(s).is_none())
}

fn leaf() -> impl Strategy<Value = Gen> {
    prop_oneof![
        "[0-9]{1,4}".prop_map(Gen::Int),
        "[0-9]{1,3}\\.[0-9]{1,3}".prop_map(Gen::Decimal),
        ("[a-z '\"\\\\\n\té\u{1}-]{0,8}", any::<bool>())
            .prop_map(|(value, double)| Gen::Str { value, double }),
        prop::sample::select(&["true", "false", "null"][..]).prop_map(Gen::Word),
        prop::sample::select(DICE).prop_map(|(d, _)| Gen::Dice(d)),
        name().prop_map(Gen::Name),
    ]
}

fn gen_expr() -> impl Strategy<Value = Gen> {
    leaf().prop_recursive(6, 48, 4, |inner| {
        let boxed = inner.clone().prop_map(Box::new);
        prop_oneof![
            (boxed.clone(), name()).prop_map(|(r, n)| Gen::Field(r, n)),
            (boxed.clone(), boxed.clone()).prop_map(|(b, i)| Gen::Index(b, i)),
            (name(), prop::collection::vec(inner.clone(), 0..4)).prop_map(|(n, a)| Gen::Call(n, a)),
            (prop::sample::select(&["-", "!"][..]), boxed.clone())
                .prop_map(|(o, e)| Gen::Prefix(o, e)),
            (prop::sample::select(BINARY), boxed.clone(), boxed.clone())
                .prop_map(|((o, _), l, r)| Gen::Bin(o, l, r)),
            (boxed.clone(), boxed.clone(), boxed.clone())
                .prop_map(|(c, t, e)| Gen::Ternary(c, t, e)),
            (prop::collection::vec(inner.clone(), 0..4), any::<bool>()).prop_map(|(items, t)| {
                Gen::List {
                    trailing_comma: t && !items.is_empty(),
                    items,
                }
            }),
            (boxed.clone(), prop::sample::select(SUFFIXES))
                .prop_map(|(c, (s, _))| Gen::Computed(c, s)),
            boxed.prop_map(Gen::Paren),
        ]
    })
}

/// How a token sits between its neighbours when rendered.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Class {
    /// Spaced on both sides in canonical text: binary operators, `in`, `?`, `:`.
    Spaced,
    /// A space after it in canonical text.
    Comma,
    /// Written right after the previous token, always: a computed count's dice suffix.
    Glued,
    /// A dice literal: a space after it always, since `1d6!` then `=...` would read as one literal.
    Dice,
    Plain,
}

struct Tokens(Vec<(String, Class)>);

impl Tokens {
    fn push(&mut self, text: impl Into<String>, class: Class) {
        self.0.push((text.into(), class));
    }

    /// Renders `g`; `canonical` picks the printer's spellings, else the generator's own ones.
    fn expr(&mut self, g: &Gen, canonical: bool) {
        match g {
            Gen::Int(text) | Gen::Decimal(text) | Gen::Name(text) => {
                self.push(text.clone(), Class::Plain)
            }
            Gen::Str { value, double } => {
                let text = if canonical || !double {
                    quote_string(value)
                } else {
                    double_quoted(value)
                };
                self.push(text, Class::Plain);
            }
            Gen::Word(w) => self.push(*w, Class::Plain),
            Gen::Dice(d) => {
                let canon = DICE.iter().find(|(w, _)| w == d).unwrap().1;
                self.push(if canonical { canon } else { d }, Class::Dice);
            }
            Gen::Field(receiver, name) => {
                self.operand(receiver, 9, canonical);
                self.push(".", Class::Plain);
                self.push(name.clone(), Class::Plain);
            }
            Gen::Index(base, index) => {
                self.operand(base, 9, canonical);
                self.push("[", Class::Plain);
                self.expr(index, canonical);
                self.push("]", Class::Plain);
            }
            Gen::Call(name, args) => {
                self.push(name.clone(), Class::Plain);
                self.push("(", Class::Plain);
                self.list(args, false, canonical);
                self.push(")", Class::Plain);
            }
            Gen::Prefix(op, operand) => {
                self.push(*op, Class::Plain);
                self.operand(operand, 8, canonical);
            }
            Gen::Bin(op, lhs, rhs) => {
                let l = level(op);
                self.operand(lhs, l, canonical);
                self.push(*op, Class::Spaced);
                self.operand(rhs, l + 1, canonical);
            }
            Gen::Ternary(c, t, e) => {
                self.operand(c, 2, canonical);
                self.push("?", Class::Spaced);
                self.expr(t, canonical);
                self.push(":", Class::Spaced);
                self.operand(e, 1, canonical);
            }
            Gen::List {
                items,
                trailing_comma,
            } => {
                self.push("[", Class::Plain);
                self.list(items, *trailing_comma && !canonical, canonical);
                self.push("]", Class::Plain);
            }
            Gen::Computed(count, suffix) => {
                self.push("(", Class::Plain);
                self.expr(count, canonical);
                self.push(")", Class::Plain);
                let canon = SUFFIXES.iter().find(|(w, _)| w == suffix).unwrap().1;
                self.push(if canonical { canon } else { suffix }, Class::Glued);
            }
            Gen::Paren(inner) => {
                self.push("(", Class::Plain);
                self.expr(inner, canonical);
                self.push(")", Class::Plain);
            }
        }
    }

    /// Renders `g` where it must hold together at least at `min` precedence, adding the parens
    /// the grammar needs (these are part of the formula: both renderings have them).
    fn operand(&mut self, g: &Gen, min: u8, canonical: bool) {
        if precedence(g) < min {
            self.expr(&Gen::Paren(Box::new(g.clone())), canonical);
        } else {
            self.expr(g, canonical);
        }
    }

    fn list(&mut self, items: &[Gen], trailing_comma: bool, canonical: bool) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.push(",", Class::Comma);
            }
            self.expr(item, canonical);
        }
        if trailing_comma {
            self.push(",", Class::Comma);
        }
    }

    fn canonical_text(&self) -> String {
        let mut out = String::new();
        for (i, (text, class)) in self.0.iter().enumerate() {
            let previous = i.checked_sub(1).map(|p| self.0[p].1);
            if *class == Class::Spaced || matches!(previous, Some(Class::Spaced | Class::Comma)) {
                out.push(' ');
            }
            out.push_str(text);
        }
        out
    }

    /// The tokens with whitespace from `spaces` between them, wherever the lexer allows.
    fn spaced_text(&self, spaces: &[&str]) -> String {
        let mut out = String::new();
        for (i, (text, class)) in self.0.iter().enumerate() {
            if i > 0 && *class != Class::Glued {
                let mut space = spaces[i % spaces.len()];
                let (previous, previous_class) = &self.0[i - 1];
                let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
                let touching = previous.ends_with(word) && text.starts_with(word);
                // A dice literal or suffix reads on while it can (`1d6!<2` explodes below 2), so
                // the generator spaces what follows one, as an author would.
                let after_dice = matches!(previous_class, Class::Dice | Class::Glued);
                if space.is_empty() && (touching || after_dice) {
                    space = " ";
                }
                out.push_str(space);
            }
            out.push_str(text);
        }
        out
    }
}

fn double_quoted(value: &str) -> String {
    let mut out = String::from("\"");
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:X}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The tree without whitespace, with literals by value: what "the same structure" means.
fn shape(node: &SyntaxNode, out: &mut String) {
    out.push_str(&format!("({:?}", node.kind()));
    for child in node.children_with_tokens() {
        match child {
            rowan::NodeOrToken::Node(n) => shape(&n, out),
            rowan::NodeOrToken::Token(t) => match t.kind() {
                // A trailing comma is not structure: the printer drops it.
                SyntaxKind::WHITESPACE | SyntaxKind::COMMA => {}
                SyntaxKind::STRING => {
                    let node = t.parent().unwrap();
                    let Some(Expr::Literal(lit)) = Expr::cast(node) else {
                        unreachable!()
                    };
                    out.push_str(&format!(" {:?}", lit.kind()));
                }
                SyntaxKind::DICE | SyntaxKind::DICE_SUFFIX => {
                    out.push_str(&format!(" {}", dice::decode(t.text()).unwrap()));
                }
                _ => out.push_str(&format!(" {}", t.text())),
            },
        }
    }
    out.push(')');
}

fn shape_of(text: &str) -> String {
    let mut out = String::new();
    shape(&parse(text).syntax_node(), &mut out);
    out
}

/// The structure the generator means, in the notation of [`ast_shape`]; the parens the renderer
/// adds for precedence are part of it.
fn gen_shape(g: &Gen) -> String {
    let operand = |g: &Gen, min: u8| {
        if precedence(g) < min {
            format!("paren({})", gen_shape(g))
        } else {
            gen_shape(g)
        }
    };
    let list = |items: &[Gen]| items.iter().map(gen_shape).collect::<Vec<_>>().join(", ");
    match g {
        Gen::Int(t) => format!("int({t})"),
        Gen::Decimal(t) => format!("decimal({t})"),
        Gen::Str { value, .. } => format!("string({value:?})"),
        Gen::Word(w) => w.to_string(),
        Gen::Dice(d) => format!("dice({})", DICE.iter().find(|(w, _)| w == d).unwrap().1),
        Gen::Name(n) => format!("name({n})"),
        Gen::Field(r, n) => format!("field({}, {n})", operand(r, 9)),
        Gen::Index(b, i) => format!("index({}, {})", operand(b, 9), gen_shape(i)),
        Gen::Call(n, args) => format!("call({n}, [{}])", list(args)),
        Gen::Prefix(op, e) => format!("prefix({op}, {})", operand(e, 8)),
        Gen::Bin(op, l, r) => {
            format!(
                "bin({op}, {}, {})",
                operand(l, level(op)),
                operand(r, level(op) + 1)
            )
        }
        Gen::Ternary(c, t, e) => {
            format!(
                "ternary({}, {}, {})",
                operand(c, 2),
                gen_shape(t),
                operand(e, 1)
            )
        }
        Gen::List { items, .. } => format!("list([{}])", list(items)),
        Gen::Computed(c, s) => {
            format!(
                "computed({}, {})",
                gen_shape(c),
                SUFFIXES.iter().find(|(w, _)| w == s).unwrap().1
            )
        }
        Gen::Paren(e) => format!("paren({})", gen_shape(e)),
    }
}

/// The structure of a parsed expression, read through the typed AST.
fn ast_shape(e: &Expr) -> String {
    let opt = |e: Option<Expr>| e.map_or("?".to_string(), |e| ast_shape(&e));
    let list = |items: &mut dyn Iterator<Item = Expr>| {
        items.map(|e| ast_shape(&e)).collect::<Vec<_>>().join(", ")
    };
    match e {
        Expr::Literal(l) => match l.kind().unwrap() {
            LiteralKind::Int(t) => format!("int({t})"),
            LiteralKind::Decimal(t) => format!("decimal({t})"),
            LiteralKind::String(v) => format!("string({v:?})"),
            LiteralKind::Bool(b) => b.to_string(),
            LiteralKind::Null => "null".to_string(),
        },
        Expr::DiceLiteral(d) => format!("dice({})", d.notation().unwrap()),
        Expr::ComputedDice(d) => format!("computed({}, {})", opt(d.count()), d.notation().unwrap()),
        Expr::NameRef(n) => format!("name({})", n.text().unwrap()),
        Expr::FieldExpr(f) => format!("field({}, {})", opt(f.receiver()), f.name().unwrap().text()),
        Expr::IndexExpr(i) => format!("index({}, {})", opt(i.base()), opt(i.index())),
        Expr::CallExpr(c) => format!(
            "call({}, [{}])",
            c.name().unwrap().text(),
            list(&mut c.args())
        ),
        Expr::PrefixExpr(p) => format!(
            "prefix({}, {})",
            p.op_kind().unwrap().as_str(),
            opt(p.operand())
        ),
        Expr::BinExpr(b) => {
            format!(
                "bin({}, {}, {})",
                b.op_kind().unwrap().as_str(),
                opt(b.lhs()),
                opt(b.rhs())
            )
        }
        Expr::TernaryExpr(t) => format!(
            "ternary({}, {}, {})",
            opt(t.condition()),
            opt(t.then_branch()),
            opt(t.else_branch())
        ),
        Expr::ParenExpr(p) => format!("paren({})", opt(p.expr())),
        Expr::ListExpr(l) => format!("list([{}])", list(&mut l.items())),
    }
}

const SPACES: &[&str] = &["", "", " ", "  ", "\n", "\t ", "\r\n"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn generated_formulas_parse_and_print_stably(
        g in gen_expr(),
        spaces in prop::collection::vec(prop::sample::select(SPACES), 1..16),
    ) {
        let mut tokens = Tokens(Vec::new());
        tokens.expr(&g, false);
        let text = tokens.spaced_text(&spaces);
        let parse = parse(&text);
        prop_assert!(parse.errors.is_empty(), "{text:?}\n{}", parse.debug_tree());

        // The parse has the structure the generator meant, read through the typed AST.
        let expr = parse.root().expr().unwrap();
        prop_assert_eq!(ast_shape(&expr), gen_shape(&g), "from {:?}", text);

        // Its print is the canonical rendering.
        let mut canonical = Tokens(Vec::new());
        canonical.expr(&g, true);
        let expected = canonical.canonical_text();
        let printed = printer::print_formula(&parse).unwrap();
        prop_assert_eq!(&printed, &expected, "from {:?}", text);

        // Printing is idempotent and keeps the structure.
        prop_assert_eq!(printer::print_formula(&ocf_syntax::parse(&printed)), Some(printed.clone()));
        prop_assert_eq!(shape_of(&printed), shape_of(&text));
    }
}
