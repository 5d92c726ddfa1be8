//! Letters that look like ASCII ones and are not: a Cyrillic `е` in a name
//! reads as `devex` and is another name. A name refused for its form says
//! which character is not ASCII and what it looks like, and a document so
//! named is held as its look-alike too, so a reference to the name people
//! meant is not a second error.

/// The ASCII letter or digit `c` looks like, for common Cyrillic, Greek and
/// full-width look-alikes.
pub fn ascii_of(c: char) -> Option<char> {
    let ascii = match c {
        'а' | 'α' => 'a',
        'в' | 'β' => 'b',
        'с' | 'ϲ' => 'c',
        'ԁ' => 'd',
        'е' | 'ε' => 'e',
        'һ' => 'h',
        'і' | 'ι' => 'i',
        'ј' => 'j',
        'к' | 'κ' => 'k',
        'ӏ' => 'l',
        'м' => 'm',
        'п' | 'η' => 'n',
        'о' | 'ο' => 'o',
        'р' | 'ρ' => 'p',
        'ԛ' => 'q',
        'г' => 'r',
        'ѕ' => 's',
        'т' | 'τ' => 't',
        'υ' => 'u',
        'ν' => 'v',
        'ԝ' | 'ω' => 'w',
        'х' | 'χ' => 'x',
        'у' | 'γ' => 'y',
        'ᴢ' => 'z',
        '‐' | '‑' | '–' | '−' => '-',
        'Ａ'..='Ｚ' => char::from(b'a' + (c as u32 - 'Ａ' as u32) as u8),
        'ａ'..='ｚ' => char::from(b'a' + (c as u32 - 'ａ' as u32) as u8),
        '０'..='９' => char::from(b'0' + (c as u32 - '０' as u32) as u8),
        _ => return None,
    };
    Some(ascii)
}

/// `s` with every look-alike replaced by the ASCII it looks like; `None`
/// when nothing was replaced.
pub fn skeleton(s: &str) -> Option<String> {
    let mut changed = false;
    let out = s
        .chars()
        .map(|c| match ascii_of(c) {
            Some(a) => {
                changed = true;
                a
            }
            None => c,
        })
        .collect();
    changed.then_some(out)
}

/// The first character of `s` that is not ASCII, said: its place, the
/// character, its code point, and the ASCII it looks like, if any.
pub fn first_non_ascii(s: &str) -> Option<String> {
    let (at, c) = s.chars().enumerate().find(|(_, c)| !c.is_ascii())?;
    let looks = ascii_of(c)
        .map(|a| format!(", which looks like `{a}`"))
        .unwrap_or_default();
    Some(format!(
        "its character {} is `{c}` (U+{:04X}), not ASCII{looks}",
        at + 1,
        c as u32
    ))
}

#[cfg(test)]
#[path = "lookalike_tests.rs"]
mod tests;
