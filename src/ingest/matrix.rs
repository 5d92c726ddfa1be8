//! Reading Prometheus' answer to a range query (`/api/v1/query_range`).
//!
//! A success is `{"status":"success","data":{"resultType":"matrix","result":
//! [{"metric":{labels},"values":[[unix_seconds,"value"],...]}]}}`; a failure is
//! `{"status":"error","errorType":"bad_data","error":"..."}`. Values are
//! strings and may be `NaN` or `±Inf`: those points are kept as `NaN`, a
//! value that is not known, so that the hour they fall in reads as unknown
//! for the series' pool and team rather than as a sum without them.

use serde::Deserialize;
use std::collections::BTreeMap;

/// One series of a matrix: its labels and its points `(unix seconds, value)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    pub labels: BTreeMap<String, String>,
    pub points: Vec<(i64, f64)>,
}

impl Series {
    /// A label's value; a missing label reads as empty, as in PromQL.
    pub fn label(&self, name: &str) -> &str {
        self.labels.get(name).map(String::as_str).unwrap_or("")
    }
}

/// What Prometheus answered.
#[derive(Debug, PartialEq)]
pub enum Answer {
    Matrix {
        series: Vec<Series>,
        warnings: Vec<String>,
    },
    Error {
        error_type: String,
        message: String,
    },
}

#[derive(Deserialize)]
struct Envelope {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default, rename = "errorType")]
    error_type: Option<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    warnings: Vec<String>,
}

#[derive(Deserialize)]
struct Data {
    #[serde(rename = "resultType")]
    result_type: String,
    result: Vec<RawSeries>,
}

#[derive(Deserialize)]
struct RawSeries {
    #[serde(default)]
    metric: BTreeMap<String, String>,
    #[serde(default)]
    values: Vec<Point>,
}

/// One `[unix_seconds, "value"]`, read straight into numbers (no string kept
/// per point: a 200 MB answer took 2.6 GB as strings). A value that is not a
/// finite number reads as `None`, a missing measurement.
struct Point(Option<(i64, f64)>);

impl<'de> Deserialize<'de> for Point {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Point, D::Error> {
        d.deserialize_seq(PointVisitor)
    }
}

struct PointVisitor;

impl<'de> serde::de::Visitor<'de> for PointVisitor {
    type Value = Point;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a point [unix_seconds, \"value\"]")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Point, A::Error> {
        use serde::de::Error;
        let t: f64 = seq
            .next_element()?
            .ok_or_else(|| A::Error::invalid_length(0, &self))?;
        let v: Option<f64> = seq
            .next_element::<Number>()?
            .ok_or_else(|| A::Error::invalid_length(1, &self))?
            .0;
        if seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
            return Err(A::Error::invalid_length(3, &self));
        }
        // A time that is not one drops the point; a value that is not a
        // finite number is kept as NaN (unknown).
        Ok(Point(t.is_finite().then(|| {
            (
                t.round() as i64,
                v.filter(|v| v.is_finite()).unwrap_or(f64::NAN),
            )
        })))
    }
}

/// A sample value, written as a string: its number, or `None` when it is not one.
struct Number(Option<f64>);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Number, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Number;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a sample value as a string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Number, E> {
                Ok(Number(v.parse().ok()))
            }
        }
        d.deserialize_str(V)
    }
}

/// Parses a response body; `Err` says why it is not a Prometheus answer.
pub fn parse(body: &[u8]) -> Result<Answer, String> {
    let env: Envelope = serde_json::from_slice(body).map_err(|e| {
        let start: String = String::from_utf8_lossy(&body[..body.len().min(80)])
            .chars()
            .filter(|c| !c.is_control())
            .collect();
        format!("not the JSON of the Prometheus API ({e}); it starts with `{start}`")
    })?;
    if env.status != "success" {
        return Ok(Answer::Error {
            error_type: env.error_type.unwrap_or_default(),
            message: env
                .error
                .unwrap_or_else(|| format!("status `{}`", env.status)),
        });
    }
    let data = env.data.ok_or("a success without `data`")?;
    if data.result_type != "matrix" {
        return Err(format!(
            "the result is a {}, not a matrix (is this a range query?)",
            data.result_type
        ));
    }
    let series: Vec<Series> = data
        .result
        .into_iter()
        .map(|raw| Series {
            labels: raw.metric,
            points: raw.values.into_iter().filter_map(|p| p.0).collect(),
        })
        .collect();
    // A matrix holds each label set once: twice, its points would be
    // added up twice.
    let mut seen = std::collections::HashSet::new();
    if let Some(twice) = series.iter().find(|s| !seen.insert(&s.labels)) {
        return Err(format!(
            "the matrix holds the series {:?} twice",
            twice.labels
        ));
    }
    // A series' points come once each, in time order: a time twice would
    // be added up twice too.
    for s in &series {
        if let Some(w) = s.points.windows(2).find(|w| w[0].0 >= w[1].0) {
            return Err(format!(
                "the series {:?} holds the time {} {}",
                s.labels,
                w[1].0,
                if w[0].0 == w[1].0 {
                    "twice"
                } else {
                    "after a later one"
                }
            ));
        }
    }
    Ok(Answer::Matrix {
        series,
        warnings: env.warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_twice_or_out_of_order_in_one_series_is_refused() {
        for values in [r#"[[3600,"8"],[3600,"9"]]"#, r#"[[7200,"8"],[3600,"9"]]"#] {
            let body = format!(
                r#"{{"status":"success","data":{{"resultType":"matrix","result":[{{"metric":{{"node":"n1"}},"values":{values}}}]}}}}"#
            );
            let e = parse(body.as_bytes()).expect_err(values);
            assert!(e.contains("holds the time"), "{e}");
        }
    }

    #[test]
    fn reads_a_matrix_and_keeps_non_finite_points_as_unknown() {
        let body = br#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"namespace":"ml","node":"n1"},"values":[[3600,"1.5"],[7200,"NaN"],[10800,"+Inf"],[14400,"2"]]},
            {"metric":{},"values":[[3600.0,"0"]]}]},"warnings":["w"]}"#;
        let Answer::Matrix { series, warnings } = parse(body).unwrap() else {
            panic!("not a matrix")
        };
        assert_eq!(series.len(), 2);
        let points = &series[0].points;
        assert_eq!(points.len(), 4);
        assert_eq!((points[0], points[3]), ((3600, 1.5), (14400, 2.0)));
        assert!(points[1].0 == 7200 && points[1].1.is_nan());
        assert!(points[2].0 == 10800 && points[2].1.is_nan());
        assert_eq!(series[0].label("namespace"), "ml");
        assert_eq!(series[1].label("namespace"), "");
        assert_eq!(warnings, vec!["w".to_string()]);
    }

    #[test]
    fn reads_errors_and_refuses_other_shapes() {
        let body = br#"{"status":"error","errorType":"bad_data","error":"1:3: parse error"}"#;
        assert_eq!(
            parse(body).unwrap(),
            Answer::Error {
                error_type: "bad_data".into(),
                message: "1:3: parse error".into()
            }
        );
        let vector = br#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
        assert!(parse(vector).unwrap_err().contains("not a matrix"));
        let html = b"<html><body>502 Bad Gateway</body></html>";
        assert!(parse(html).unwrap_err().contains("<html>"));
    }
}
