//! One message of a translation file: ICU MessageFormat text (i18n.md "Messages"), parsed by
//! ferrocat-icu and formatted here, with plural categories from ICU4X's CLDR rules (icu_plurals).
//!
//! What a message may hold: text, `{arg}`, `{arg, number}` (`integer`, `percent` styles),
//! `{arg, plural, …}` and `{arg, selectordinal, …}` with `=N` cases, `offset:` and `#`,
//! `{arg, select, …}`, and ICU's apostrophe quoting. Every `plural`, `selectordinal` and `select`
//! needs an `other` case. Dates, times and tags are not arguments a pack's key provides.

use ferrocat_icu::{IcuMessage, IcuNode, IcuOption, IcuParserOptions, IcuPluralKind};
use fixed_decimal::Decimal;
use icu_locale_core::Locale;
use icu_plurals::{PluralCategory, PluralOperands, PluralRules};

/// A parsed message.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    nodes: Vec<IcuNode>,
}

/// Why a message does not parse: the parser's words and where, in characters from the message's
/// start (line and column 1-based, within the message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageError {
    pub message: String,
    pub line: usize,
    pub column: usize,
}

/// A value given to a message's argument.
#[derive(Debug, Clone, PartialEq)]
pub enum TextArg {
    /// A number, as the engine's decimals print (`3`, `-1`, `2.5`).
    Number(f64),
    /// A word: a `select` case, or text put in place.
    Text(String),
}

impl From<i64> for TextArg {
    fn from(n: i64) -> TextArg {
        TextArg::Number(n as f64)
    }
}

impl From<f64> for TextArg {
    fn from(n: f64) -> TextArg {
        TextArg::Number(n)
    }
}

impl From<&str> for TextArg {
    fn from(s: &str) -> TextArg {
        TextArg::Text(s.to_owned())
    }
}

impl From<String> for TextArg {
    fn from(s: String) -> TextArg {
        TextArg::Text(s)
    }
}

impl TextArg {
    /// A JSON value as an argument: numbers as numbers, strings as text, anything else as its JSON.
    pub fn from_json(value: &serde_json::Value) -> TextArg {
        match value {
            serde_json::Value::Number(n) => TextArg::Number(n.as_f64().unwrap_or(0.0)),
            serde_json::Value::String(s) => TextArg::Text(s.clone()),
            serde_json::Value::Bool(b) => TextArg::Text(b.to_string()),
            other => TextArg::Text(other.to_string()),
        }
    }

    fn display(&self) -> String {
        match self {
            TextArg::Number(n) => number_text(*n),
            TextArg::Text(s) => s.clone(),
        }
    }
}

/// A number as the sheet prints it: whole numbers without a point, others with the digits they
/// need (the engine's decimals have six places at most).
pub fn number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        let text = format!("{n:.6}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

impl Message {
    /// Parses ICU MessageFormat text. Tags (`<b>`) are text; `plural`, `selectordinal` and `select`
    /// need an `other` case.
    pub fn parse(text: &str) -> Result<Message, MessageError> {
        let options = IcuParserOptions::default()
            .with_ignore_tag(true)
            .with_requires_other_clause(true);
        let (normalized, inserted) = apostrophes(text);
        match ferrocat_icu::parse_icu_with_options(&normalized, &options) {
            Ok(IcuMessage { nodes }) => {
                let message = Message { nodes };
                if let Some(error) = message.unsupported() {
                    return Err(error);
                }
                Ok(message)
            }
            Err(error) => {
                // Back to the author's text: less the apostrophes doubled before the error.
                let offset = error.position.offset
                    - inserted
                        .iter()
                        .filter(|&&i| i < error.position.offset)
                        .count();
                let offset = offset.min(text.len());
                Err(MessageError {
                    message: error.message,
                    line: text
                        .get(..offset)
                        .map_or(1, |s| s.matches('\n').count() + 1),
                    column: text
                        .get(line_start(text, offset)..offset)
                        .map_or(1, |s| s.chars().count() + 1),
                })
            }
        }
    }

    /// The arguments the message reads, each once, in first-use order.
    pub fn arguments(&self) -> Vec<String> {
        let mut names = Vec::new();
        collect_arguments(&self.nodes, &mut names);
        names
    }

    /// The message with `args` put in, plural cases chosen by `locale`'s CLDR rules (English's
    /// when the tag is not one ICU4X knows). An argument not given is left as `{name}`.
    pub fn format(&self, locale: &str, args: &[(&str, TextArg)]) -> String {
        let mut out = String::new();
        let mut plurals = Plurals::new(locale);
        format_nodes(&self.nodes, args, None, &mut plurals, &mut out);
        out
    }

    /// A date, time or other formatter a pack's key never provides a value for.
    fn unsupported(&self) -> Option<MessageError> {
        fn walk(nodes: &[IcuNode]) -> Option<String> {
            for node in nodes {
                match node {
                    IcuNode::Date { name, .. }
                    | IcuNode::Time { name, .. }
                    | IcuNode::List { name, .. }
                    | IcuNode::Duration { name, .. }
                    | IcuNode::Ago { name, .. }
                    | IcuNode::Name { name, .. } => {
                        return Some(format!(
                            "`{name}`: only `number`, `plural`, `selectordinal` and `select` \
                             format an argument"
                        ));
                    }
                    IcuNode::Select { options, .. } | IcuNode::Plural { options, .. } => {
                        for option in options {
                            if let Some(found) = walk(&option.value) {
                                return Some(found);
                            }
                        }
                    }
                    IcuNode::Tag { children, .. } => {
                        if let Some(found) = walk(children) {
                            return Some(found);
                        }
                    }
                    _ => {}
                }
            }
            None
        }
        walk(&self.nodes).map(|message| MessageError {
            message,
            line: 1,
            column: 1,
        })
    }
}

/// ICU's apostrophe rule as ICU4J and FormatJS apply it (`ApostropheMode.DOUBLE_OPTIONAL`): an
/// apostrophe starts quoted text only before `{`, `}`, `#` or `|`, `''` is one apostrophe, and any
/// other apostrophe is itself ("Devil's Bargain"). ferrocat-icu quotes at every apostrophe, so
/// the lone ones are doubled for it; the offsets (in the result) of the apostrophes added are
/// returned too.
fn apostrophes(text: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len() + 4);
    let mut inserted = Vec::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\'' {
            out.push(c);
            continue;
        }
        let next = chars.peek().copied();
        if next == Some('\'') {
            chars.next();
            out.push_str("''");
        } else if quoted {
            quoted = false;
            out.push('\'');
        } else if matches!(next, Some('{' | '}' | '#' | '|')) {
            quoted = true;
            out.push('\'');
        } else {
            inserted.push(out.len());
            out.push_str("''");
        }
    }
    (out, inserted)
}

fn line_start(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .and_then(|before| before.rfind('\n'))
        .map_or(0, |i| i + 1)
}

fn collect_arguments(nodes: &[IcuNode], names: &mut Vec<String>) {
    let add = |name: &String, names: &mut Vec<String>| {
        if !names.contains(name) {
            names.push(name.clone());
        }
    };
    for node in nodes {
        match node {
            IcuNode::Argument { name }
            | IcuNode::Number { name, .. }
            | IcuNode::Date { name, .. }
            | IcuNode::Time { name, .. }
            | IcuNode::List { name, .. }
            | IcuNode::Duration { name, .. }
            | IcuNode::Ago { name, .. }
            | IcuNode::Name { name, .. } => add(name, names),
            IcuNode::Select { name, options } | IcuNode::Plural { name, options, .. } => {
                add(name, names);
                for option in options {
                    collect_arguments(&option.value, names);
                }
            }
            IcuNode::Tag { children, .. } => collect_arguments(children, names),
            _ => {}
        }
    }
}

/// The plural rules of one locale, made when a plural is first formatted.
struct Plurals {
    locale: Locale,
    cardinal: Option<PluralRules>,
    ordinal: Option<PluralRules>,
}

impl Plurals {
    fn new(tag: &str) -> Plurals {
        let locale = Locale::try_from_str(tag)
            .unwrap_or_else(|_| Locale::try_from_str("en").expect("`en` is a locale"));
        Plurals {
            locale,
            cardinal: None,
            ordinal: None,
        }
    }

    fn category(&mut self, kind: &IcuPluralKind, n: f64) -> PluralCategory {
        // The number as written (`1.50` would be `other` in English where `1.5` is too; the
        // engine's decimals print without trailing zeros).
        let operands: PluralOperands = match Decimal::try_from_str(&number_text(n.abs())) {
            Ok(decimal) => (&decimal).into(),
            Err(_) => return PluralCategory::Other,
        };
        let locale = &self.locale;
        let slot = match kind {
            IcuPluralKind::Cardinal => &mut self.cardinal,
            IcuPluralKind::Ordinal => &mut self.ordinal,
        };
        if slot.is_none() {
            let rules = match kind {
                IcuPluralKind::Cardinal => PluralRules::try_new_cardinal(locale.into()),
                IcuPluralKind::Ordinal => PluralRules::try_new_ordinal(locale.into()),
            };
            *slot = rules.ok();
        }
        slot.as_ref()
            .map_or(PluralCategory::Other, |rules| rules.category_for(operands))
    }
}

fn category_name(category: PluralCategory) -> &'static str {
    match category {
        PluralCategory::Zero => "zero",
        PluralCategory::One => "one",
        PluralCategory::Two => "two",
        PluralCategory::Few => "few",
        PluralCategory::Many => "many",
        PluralCategory::Other => "other",
    }
}

fn argument<'a>(args: &'a [(&str, TextArg)], name: &str) -> Option<&'a TextArg> {
    args.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
}

fn pick<'a>(options: &'a [IcuOption], selector: &str) -> Option<&'a IcuOption> {
    options.iter().find(|o| o.selector == selector)
}

fn format_nodes(
    nodes: &[IcuNode],
    args: &[(&str, TextArg)],
    pound: Option<f64>,
    plurals: &mut Plurals,
    out: &mut String,
) {
    for node in nodes {
        match node {
            IcuNode::Literal(text) => out.push_str(text),
            IcuNode::Pound => match pound {
                Some(n) => out.push_str(&number_text(n)),
                None => out.push('#'),
            },
            IcuNode::Number { name, style } => match argument(args, name) {
                Some(TextArg::Number(n)) => out.push_str(&match style.as_deref().map(str::trim) {
                    Some("integer") => number_text(n.round()),
                    Some("percent") => format!("{}%", number_text((n * 100.0).round())),
                    _ => number_text(*n),
                }),
                Some(text) => out.push_str(&text.display()),
                None => out.push_str(&format!("{{{name}}}")),
            },
            IcuNode::Select { name, options } => {
                let value = argument(args, name).map(TextArg::display);
                let chosen = value
                    .as_deref()
                    .and_then(|v| pick(options, v))
                    .or_else(|| pick(options, "other"));
                if let Some(option) = chosen {
                    format_nodes(&option.value, args, pound, plurals, out);
                }
            }
            IcuNode::Plural {
                name,
                kind,
                offset,
                options,
            } => {
                let n = match argument(args, name) {
                    Some(TextArg::Number(n)) => *n,
                    Some(TextArg::Text(t)) => t.trim().parse().unwrap_or(0.0),
                    None => {
                        out.push_str(&format!("{{{name}}}"));
                        continue;
                    }
                };
                let exact = format!("={}", number_text(n));
                let shifted = n - f64::from(*offset);
                let chosen = pick(options, &exact).or_else(|| {
                    let category = category_name(plurals.category(kind, shifted));
                    pick(options, category).or_else(|| pick(options, "other"))
                });
                if let Some(option) = chosen {
                    format_nodes(&option.value, args, Some(shifted), plurals, out);
                }
            }
            IcuNode::Tag { children, .. } => format_nodes(children, args, pound, plurals, out),
            IcuNode::Argument { name }
            | IcuNode::Date { name, .. }
            | IcuNode::Time { name, .. }
            | IcuNode::List { name, .. }
            | IcuNode::Duration { name, .. }
            | IcuNode::Ago { name, .. }
            | IcuNode::Name { name, .. } => match argument(args, name) {
                Some(value) => out.push_str(&value.display()),
                None => out.push_str(&format!("{{{name}}}")),
            },
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(text: &str, locale: &str, args: &[(&str, TextArg)]) -> String {
        Message::parse(text).unwrap().format(locale, args)
    }

    #[test]
    fn plurals_follow_the_locales_rules() {
        let m = "{count, plural, one {# spell} other {# spells}}";
        assert_eq!(fmt(m, "en", &[("count", 1.into())]), "1 spell");
        assert_eq!(fmt(m, "en", &[("count", 2.into())]), "2 spells");
        assert_eq!(fmt(m, "en", &[("count", 1.5.into())]), "1.5 spells");
        // French puts 0 and 1 in `one`.
        let f = "{count, plural, one {# sort} other {# sorts}}";
        assert_eq!(fmt(f, "fr", &[("count", 0.into())]), "0 sort");
        // Polish has `few` and `many`.
        let p = "{count, plural, one {# czar} few {# czary} many {# czarów} other {# czaru}}";
        assert_eq!(fmt(p, "pl", &[("count", 3.into())]), "3 czary");
        assert_eq!(fmt(p, "pl", &[("count", 5.into())]), "5 czarów");
    }

    #[test]
    fn exact_cases_offsets_ordinals_and_selects() {
        let m = "{n, plural, offset:1 =0 {nobody} =1 {you} one {you and # other} other {you and # others}}";
        assert_eq!(fmt(m, "en", &[("n", 0.into())]), "nobody");
        assert_eq!(fmt(m, "en", &[("n", 2.into())]), "you and 1 other");
        assert_eq!(fmt(m, "en", &[("n", 3.into())]), "you and 2 others");
        let o = "{n, selectordinal, one {#st} two {#nd} few {#rd} other {#th}}";
        assert_eq!(fmt(o, "en", &[("n", 22.into())]), "22nd");
        assert_eq!(fmt(o, "en", &[("n", 13.into())]), "13th");
        let s = "{kind, select, melee {Melee} other {Ranged}}";
        assert_eq!(fmt(s, "en", &[("kind", "melee".into())]), "Melee");
        assert_eq!(fmt(s, "en", &[("kind", "thrown".into())]), "Ranged");
        assert_eq!(fmt("it''s '{'x'}' {x}", "en", &[]), "it's {x} {x}");
        assert_eq!(fmt("Devil's Bargain", "en", &[]), "Devil's Bargain");
        assert_eq!(
            fmt("Thieves' Tools: {n}", "en", &[("n", 2.into())]),
            "Thieves' Tools: 2"
        );
        let e = Message::parse("Devil's {n").unwrap_err();
        assert_eq!((e.line, e.column), (1, 11), "{e:?}");
    }

    #[test]
    fn errors_and_arguments() {
        assert!(Message::parse("{count, plural, one {x}}").is_err());
        assert!(Message::parse("{a").is_err());
        assert!(Message::parse("{when, date}").is_err());
        let m = Message::parse("{a} {b, plural, other {{c}}}").unwrap();
        assert_eq!(m.arguments(), ["a", "b", "c"]);
    }
}
