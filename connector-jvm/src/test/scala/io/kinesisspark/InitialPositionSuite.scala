package io.kinesisspark

import java.time.{ZoneOffset, ZonedDateTime}

import org.scalatest.funsuite.AnyFunSuite

class InitialPositionSuite extends AnyFunSuite {
  private def millis(y: Int, mo: Int, d: Int, h: Int, mi: Int, s: Int, offsetHours: Int): Long =
    ZonedDateTime.of(y, mo, d, h, mi, s, 0, ZoneOffset.ofHours(offsetHours)).toInstant.toEpochMilli

  test("at_timestamp in the Databricks default format, with a zone name") {
    assert(InitialPosition.parse("""{"at_timestamp": "06/25/2020 10:23:45 PDT"}""") ==
      InitialPosition.AtTimestamp(millis(2020, 6, 25, 10, 23, 45, -7)))
  }

  test("at_timestamp with an RFC 822 offset") {
    assert(InitialPosition.parse("""{"at_timestamp": "11/21/2026 12:30:00 +0000"}""") ==
      InitialPosition.AtTimestamp(millis(2026, 11, 21, 12, 30, 0, 0)))
  }

  test("at_timestamp with an explicit format") {
    assert(InitialPosition.parse("""{"at_timestamp": "2020-06-25T10:23:45+0200", "format": "yyyy-MM-dd'T'HH:mm:ssZ"}""") ==
      InitialPosition.AtTimestamp(millis(2020, 6, 25, 10, 23, 45, 2)))
  }

  test("names are case-insensitive") {
    assert(InitialPosition.parse("LATEST") == InitialPosition.Latest)
    assert(InitialPosition.parse(" Trim_Horizon ") == InitialPosition.TrimHorizon)
  }

  test("an impossible date is rejected (parsing is not lenient)") {
    val e = intercept[IllegalArgumentException](InitialPosition.parse("""{"at_timestamp": "13/45/2020 10:23:45 PDT"}"""))
    assert(e.getMessage.contains("initialPosition"))
  }

  test("malformed JSON is rejected with the value") {
    val e = intercept[IllegalArgumentException](InitialPosition.parse("""{"at_timestamp": """))
    assert(e.getMessage.contains("'initialPosition'") && e.getMessage.contains("""{"at_timestamp": """))
  }
}
