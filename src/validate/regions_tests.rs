//! Region shapes per provider, and the region a zone names.

use super::*;

#[test]
fn regions_follow_their_providers_shapes() {
    for r in [
        "us-east-1",
        "eu-central-2",
        "us-gov-west-1",
        "ap-southeast-3",
        "cn-northwest-1",
        "us-isob-east-1",
        "eusc-de-east-1",
        "il-central-1",
    ] {
        assert_eq!(region_shape(Provider::Aws, r), None, "{r}");
    }
    for r in [
        "us-east2",
        "useast1",
        "us-east",
        "east-1",
        "us-east-1a",
        "us-east-123",
    ] {
        assert!(region_shape(Provider::Aws, r).is_some(), "{r}");
    }
    for r in [
        "us-central1",
        "europe-west4",
        "northamerica-northeast2",
        "me-central2",
        "africa-south1",
        "u-france-east1",
    ] {
        assert_eq!(region_shape(Provider::Gcp, r), None, "{r}");
    }
    for r in [
        "us-central",
        "us-central-1",
        "uscentral1",
        "us-central1-a",
        "us-1",
    ] {
        assert!(region_shape(Provider::Gcp, r).is_some(), "{r}");
    }
    for r in [
        "eastus",
        "westeurope",
        "eastus2",
        "eastus2euap",
        "usgovvirginia",
        "southafricanorth",
    ] {
        assert_eq!(region_shape(Provider::Azure, r), None, "{r}");
    }
    for r in ["east-us", "2eastus"] {
        assert!(region_shape(Provider::Azure, r).is_some(), "{r}");
    }
    assert_eq!(region_shape(Provider::Onprem, "rack-7"), None);
}

#[test]
fn a_zone_names_its_region() {
    assert_eq!(
        zone_region(Provider::Aws, "us-east-2a").as_deref(),
        Some("us-east-2")
    );
    assert_eq!(
        zone_region(Provider::Gcp, "us-central1-f").as_deref(),
        Some("us-central1")
    );
    assert_eq!(zone_region(Provider::Aws, "us-east-2"), None);
    assert_eq!(zone_region(Provider::Azure, "1"), None);
}
