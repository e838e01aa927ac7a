//! Dice notation: the text of one dice literal (`4d6dl1`, `1d20ro<2`, `5d6cs>=5`) as data.
//!
//! The lexer uses [`scan`] to find where a dice literal ends, and the parser and the layers above use
//! [`decode`] to read it. The notation types live here, at the bottom, because they are syntax: the
//! dice crate rolls them and the formula crate builds dice values from them.

use std::fmt;

/// One dice literal as written: `count` is `None` for the suffix of a computed count (`(expr)d6`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DiceNotation {
    pub count: Option<u32>,
    pub die: Die,
    pub modifiers: Vec<Modifier>,
}

/// The kind of die: `dS` (faces 1..S), `d%` (a d100) or `dF` (Fate: -1, 0, +1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Die {
    Sides(u32),
    Percent,
    Fate,
}

impl Die {
    /// The lowest and the highest face.
    pub fn face_range(self) -> (i64, i64) {
        match self {
            Die::Sides(s) => (1, i64::from(s)),
            Die::Percent => (1, 100),
            Die::Fate => (-1, 1),
        }
    }

    /// How many distinct faces the die has.
    pub fn face_count(self) -> u32 {
        match self {
            Die::Sides(s) => s,
            Die::Percent => 100,
            Die::Fate => 3,
        }
    }
}

/// A comparison against a face (`>=5`, `<2`, or a bare `1` meaning `=1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Compare {
    pub op: CompareOp,
    pub value: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Compare {
    pub fn eq(value: i64) -> Compare {
        Compare {
            op: CompareOp::Eq,
            value,
        }
    }

    pub fn matches(self, face: i64) -> bool {
        match self.op {
            CompareOp::Eq => face == self.value,
            CompareOp::Lt => face < self.value,
            CompareOp::Le => face <= self.value,
            CompareOp::Gt => face > self.value,
            CompareOp::Ge => face >= self.value,
        }
    }
}

/// The fixed set of dice modifiers (`dice-and-actions.md`, Dice notation). The names of the variants,
/// in lower camel case, are the roll item's `modifiers[].type` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Modifier {
    KeepHighest(u32),
    KeepLowest(u32),
    DropHighest(u32),
    DropLowest(u32),
    /// `!`, or `!>4`: `None` explodes on the highest face.
    Explode(Option<Compare>),
    /// `!!`: the extra dice add to the die that exploded.
    ExplodeCompound(Option<Compare>),
    /// `rN`: reroll matching faces until they stop matching. `count`, set only by the `reroll` roll
    /// modifier, limits how many of the initial dice are rerolled.
    Reroll {
        at: Compare,
        count: Option<u32>,
    },
    /// `roN`: reroll matching faces once.
    RerollOnce {
        at: Compare,
        count: Option<u32>,
    },
    CountSuccesses(Compare),
    CountFailures(Compare),
    /// `minN`: a face below N counts as N.
    Minimum(i64),
    /// `maxN`: a face above N counts as N.
    Maximum(i64),
}

impl Modifier {
    /// The spec's name of the modifier, as in a roll item's `modifiers[].type`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Modifier::KeepHighest(_) => "keepHighest",
            Modifier::KeepLowest(_) => "keepLowest",
            Modifier::DropHighest(_) => "dropHighest",
            Modifier::DropLowest(_) => "dropLowest",
            Modifier::Explode(_) => "explode",
            Modifier::ExplodeCompound(_) => "explodeCompound",
            Modifier::Reroll { .. } => "reroll",
            Modifier::RerollOnce { .. } => "rerollOnce",
            Modifier::CountSuccesses(_) => "countSuccesses",
            Modifier::CountFailures(_) => "countFailures",
            Modifier::Minimum(_) => "minimum",
            Modifier::Maximum(_) => "maximum",
        }
    }
}

/// Why a dice literal could not be read; `offset` is the byte offset in the literal's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiceNotationError {
    pub offset: usize,
    pub message: String,
}

/// The length of the dice literal at the start of `text`, or `None` if `text` does not start with
/// one. A literal is `digits 'd' (digits | '%' | 'F')` and every modifier that follows; trailing
/// letters or digits that are not a modifier are included, so that [`decode`] reports them rather
/// than the parser meeting a stray name.
pub fn scan(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    scan_suffix(&text[digits..]).map(|len| digits + len)
}

/// Like [`scan`] for the suffix of a computed count: `d6kh1` after `(expr)`.
pub fn scan_suffix(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'd') {
        return None;
    }
    let mut reader = Reader { bytes, pos: 1 };
    // Only the shape of the die is checked here: `1d0` and `1d99999999999` are dice literals that
    // `decode` rejects, so the error names the literal rather than a stray name `d0`.
    if !reader.skip_die() {
        return None;
    }
    while reader.pos < bytes.len() {
        let before = reader.pos;
        if reader.modifier().is_err() || reader.pos == before {
            reader.pos = before;
            break;
        }
    }
    // Swallow the rest of a would-be name (`2d6kx`) so the error names the whole literal.
    while reader.pos < bytes.len()
        && (bytes[reader.pos].is_ascii_alphanumeric() || bytes[reader.pos] == b'_')
    {
        reader.pos += 1;
    }
    Some(reader.pos)
}

/// Reads a whole dice literal (`4d6dl1`) or a computed count's suffix (`d6kh1`).
pub fn decode(text: &str) -> Result<DiceNotation, DiceNotationError> {
    let bytes = text.as_bytes();
    let mut reader = Reader { bytes, pos: 0 };
    let count = if bytes.first().is_some_and(u8::is_ascii_digit) {
        let n = reader.number()?;
        Some(u32::try_from(n).map_err(|_| reader.error(0, "the dice count is too large"))?)
    } else {
        None
    };
    if !reader.eat("d") {
        return Err(reader.error(reader.pos, "expected `d` in a dice literal"));
    }
    let die = reader.die()?;
    let mut modifiers = Vec::new();
    while reader.pos < bytes.len() {
        modifiers.push(reader.modifier()?);
    }
    Ok(DiceNotation {
        count,
        die,
        modifiers,
    })
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn error(&self, offset: usize, message: &str) -> DiceNotationError {
        DiceNotationError {
            offset,
            message: message.to_string(),
        }
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.bytes[self.pos..].starts_with(s.as_bytes()) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn peek_digit(&self) -> bool {
        self.bytes.get(self.pos).is_some_and(u8::is_ascii_digit)
    }

    fn number(&mut self) -> Result<i64, DiceNotationError> {
        let start = self.pos;
        let mut value: i64 = 0;
        while self.peek_digit() {
            let digit = i64::from(self.bytes[self.pos] - b'0');
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(digit))
                .ok_or_else(|| self.error(start, "number too large in a dice literal"))?;
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error(start, "expected a number"));
        }
        Ok(value)
    }

    fn count(&mut self) -> Result<u32, DiceNotationError> {
        let start = self.pos;
        let n = self.number()?;
        u32::try_from(n).map_err(|_| self.error(start, "number too large in a dice literal"))
    }

    /// Steps over `%`, `F` or digits, whatever their value; false if none is there.
    fn skip_die(&mut self) -> bool {
        if self.eat("%") || self.eat("F") {
            return true;
        }
        let start = self.pos;
        while self.peek_digit() {
            self.pos += 1;
        }
        self.pos > start
    }

    fn die(&mut self) -> Result<Die, DiceNotationError> {
        if self.eat("%") {
            return Ok(Die::Percent);
        }
        if self.eat("F") {
            return Ok(Die::Fate);
        }
        let start = self.pos;
        let sides = self.count()?;
        if sides == 0 {
            return Err(self.error(start, "a die needs at least one side"));
        }
        Ok(Die::Sides(sides))
    }

    /// An optional count that defaults to 1 (`kh` is `kh1`).
    fn count_or_one(&mut self) -> Result<u32, DiceNotationError> {
        if self.peek_digit() {
            self.count()
        } else {
            Ok(1)
        }
    }

    fn compare(&mut self) -> Result<Compare, DiceNotationError> {
        let op = if self.eat(">=") {
            CompareOp::Ge
        } else if self.eat("<=") {
            CompareOp::Le
        } else if self.eat(">") {
            CompareOp::Gt
        } else if self.eat("<") {
            CompareOp::Lt
        } else {
            self.eat("=");
            CompareOp::Eq
        };
        // A sign is allowed after an explicit comparison only, for Fate dice (`cs>=-1`).
        let negative = op != CompareOp::Eq && self.eat("-");
        let value = self.number()?;
        Ok(Compare {
            op,
            value: if negative { -value } else { value },
        })
    }

    /// Whether `!=` (and not `!==`) starts at `pos`.
    fn not_equal_at(&self, pos: usize) -> bool {
        self.bytes.get(pos) == Some(&b'!')
            && self.bytes.get(pos + 1) == Some(&b'=')
            && self.bytes.get(pos + 2) != Some(&b'=')
    }

    /// The point after `!` or `!!`, if one follows: `4` (equal), `<2`, `<=2`, `>4` or `>=4`, never
    /// `=4`, which `!` would make `!=`. What does not read as a point is left for what comes after
    /// the literal: in `1d10!!==0` the `==` is a comparison.
    fn optional_compare(&mut self) -> Option<Compare> {
        let start = self.pos;
        match self.bytes.get(self.pos) {
            Some(b) if matches!(b, b'<' | b'>') || b.is_ascii_digit() => {
                self.compare().ok().or_else(|| {
                    self.pos = start;
                    None
                })
            }
            _ => None,
        }
    }

    fn modifier(&mut self) -> Result<Modifier, DiceNotationError> {
        let start = self.pos;
        // Longest names first: `!!` before `!`, `ro` before `r`, `min`/`max` before nothing else.
        if self.eat("kh") {
            return Ok(Modifier::KeepHighest(self.count_or_one()?));
        }
        if self.eat("kl") {
            return Ok(Modifier::KeepLowest(self.count_or_one()?));
        }
        if self.eat("dh") {
            return Ok(Modifier::DropHighest(self.count_or_one()?));
        }
        if self.eat("dl") {
            return Ok(Modifier::DropLowest(self.count_or_one()?));
        }
        // `!=` is the inequality operator, never an explosion: `(n)d6!=0` compares. So a `!` directly
        // followed by one `=` ends the literal, and an explosion point is never written with `=`.
        if self.not_equal_at(self.pos) {
            return Err(self.error(start, "`!=` after dice is a comparison"));
        }
        if self.bytes[self.pos..].starts_with(b"!!") && !self.not_equal_at(self.pos + 1) {
            self.pos += 2;
            return Ok(Modifier::ExplodeCompound(self.optional_compare()));
        }
        if self.eat("!") {
            return Ok(Modifier::Explode(self.optional_compare()));
        }
        if self.eat("ro") {
            return Ok(Modifier::RerollOnce {
                at: self.compare()?,
                count: None,
            });
        }
        if self.eat("r") {
            return Ok(Modifier::Reroll {
                at: self.compare()?,
                count: None,
            });
        }
        if self.eat("cs") {
            return Ok(Modifier::CountSuccesses(self.compare()?));
        }
        if self.eat("cf") {
            return Ok(Modifier::CountFailures(self.compare()?));
        }
        if self.eat("min") {
            return Ok(Modifier::Minimum(self.number()?));
        }
        if self.eat("max") {
            return Ok(Modifier::Maximum(self.number()?));
        }
        Err(self.error(start, "unknown dice modifier"))
    }
}

impl fmt::Display for Die {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Die::Sides(s) => write!(f, "d{s}"),
            Die::Percent => f.write_str("d%"),
            Die::Fate => f.write_str("dF"),
        }
    }
}

impl fmt::Display for Compare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.op {
            CompareOp::Eq => "",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
        };
        write!(f, "{op}{}", self.value)
    }
}

impl fmt::Display for Modifier {
    /// The canonical notation of the modifier. A reroll `count` has no notation and is not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Modifier::KeepHighest(n) => write!(f, "kh{n}"),
            Modifier::KeepLowest(n) => write!(f, "kl{n}"),
            Modifier::DropHighest(n) => write!(f, "dh{n}"),
            Modifier::DropLowest(n) => write!(f, "dl{n}"),
            Modifier::Explode(None) => f.write_str("!"),
            Modifier::Explode(Some(c)) => write!(f, "!{c}"),
            Modifier::ExplodeCompound(None) => f.write_str("!!"),
            Modifier::ExplodeCompound(Some(c)) => write!(f, "!!{c}"),
            Modifier::Reroll { at, .. } => write!(f, "r{at}"),
            Modifier::RerollOnce { at, .. } => write!(f, "ro{at}"),
            Modifier::CountSuccesses(c) => write!(f, "cs{c}"),
            Modifier::CountFailures(c) => write!(f, "cf{c}"),
            Modifier::Minimum(n) => write!(f, "min{n}"),
            Modifier::Maximum(n) => write!(f, "max{n}"),
        }
    }
}

impl fmt::Display for DiceNotation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(count) = self.count {
            write!(f, "{count}")?;
        }
        write!(f, "{}", self.die)?;
        for m in &self.modifiers {
            write!(f, "{m}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(text: &str) -> String {
        assert_eq!(scan(text), Some(text.len()), "scan {text}");
        decode(text).unwrap().to_string()
    }

    #[test]
    fn every_modifier_reads_and_prints() {
        for (text, printed) in [
            ("1d8", "1d8"),
            ("2d20kh1", "2d20kh1"),
            ("2d20kh", "2d20kh1"),
            ("2d6kl1", "2d6kl1"),
            ("4d6dl1", "4d6dl1"),
            ("4d6dh2", "4d6dh2"),
            ("1d6!", "1d6!"),
            ("1d6!>4", "1d6!>4"),
            ("1d6!5", "1d6!5"),
            ("1d6!!", "1d6!!"),
            ("1d20r1", "1d20r1"),
            ("1d20r<3", "1d20r<3"),
            ("1d20ro1", "1d20ro1"),
            ("5d6cs>=5", "5d6cs>=5"),
            ("5d6cf1", "5d6cf1"),
            ("4dFcs>=-1", "4dFcs>=-1"),
            ("1d20min10", "1d20min10"),
            ("1d20max15", "1d20max15"),
            ("1d%", "1d%"),
            ("4dF", "4dF"),
            ("10d10cs>=7cf1", "10d10cs>=7cf1"),
        ] {
            assert_eq!(roundtrip(text), printed);
        }
    }

    #[test]
    fn scan_stops_where_the_literal_ends() {
        assert_eq!(scan("2d6+1"), Some(3));
        assert_eq!(scan("1d20 > 3"), Some(4));
        assert_eq!(scan("2d6kh1)"), Some(6));
        // A comparison right after an explosion is not its point.
        assert_eq!(scan("1d10!!==0"), Some(6));
        assert_eq!(scan("1d6!<=2"), Some(7));
        assert_eq!(scan("1d6!=="), Some(4));
        assert_eq!(scan("1d6!=0"), Some(3));
        assert_eq!(scan("1d6!!=0"), Some(4));
        assert_eq!(scan("12"), None);
        assert_eq!(scan("2dx"), None);
        assert_eq!(scan_suffix("d6kh1 + 2"), Some(5));
        assert_eq!(scan_suffix("dex"), None);
        // A die of a bad size is still a literal, so that decoding reports it.
        assert_eq!(scan("1d0 + 1"), Some(3));
        assert_eq!(scan("1d99999999999"), Some(13));
        // A stray name after the literal is part of it, and decoding reports it.
        assert_eq!(scan("2d6kx"), Some(5));
        assert_eq!(decode("2d6kx").unwrap_err().offset, 3);
    }

    #[test]
    fn bad_literals_say_why() {
        assert_eq!(
            decode("1d0").unwrap_err().message,
            "a die needs at least one side"
        );
        assert_eq!(
            decode("99999999999d6").unwrap_err().message,
            "the dice count is too large"
        );
        assert_eq!(decode("1d6q").unwrap_err().message, "unknown dice modifier");
    }
}
