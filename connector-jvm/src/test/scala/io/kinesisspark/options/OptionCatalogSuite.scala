package io.kinesisspark.options

import org.json4s._
import org.json4s.jackson.JsonMethods
import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.KinesisOptionKeys

class OptionCatalogSuite extends AnyFunSuite {
  private def names(part: String): Seq[String] = OptionCatalog.parts.toMap.apply(part).map(_.name)

  test("the catalog has every option the source and the sink read, each once per part") {
    assert((names("source") ++ names("connection") ++ names("efo") ++ names("kclLeaseTable") ++
      names("awslabsCheckpoint") ++ names("dynamoDb")).sorted ==
      KinesisOptionKeys.All.sorted)
    assert((names("sink") ++ names("connection")).sorted == KinesisOptionKeys.SinkAll.sorted)
    OptionCatalog.parts.foreach { case (part, specs) =>
      assert(specs.map(_.name).distinct.size == specs.size, s"an option twice in part '$part'")
    }
  }

  test("every default, rendered as option text, reads back as itself") {
    for ((_, specs) <- OptionCatalog.parts; spec <- specs; text <- spec.renderedDefault) {
      assert(spec.read(Map(spec.name -> text).get) == spec.default, s"option '${spec.name}', default '$text'")
    }
    // Rendered as the user guide writes them, in the largest unit that is exact.
    val rendered = io.kinesisspark.KinesisSourceOptions.Spec.all.flatMap(s => s.renderedDefault.map(s.name -> _)).toMap
    assert(Seq("minFetchPeriod", "maxFetchDuration", "fetchBufferSize", "shardFetchInterval", "maxFetchRate")
      .map(rendered) == Seq("400ms", "10s", "20gb", "1s", "1.0"))
  }

  test("the data file holds each option's kind, bounds, default and accepted values, and the messages' forms") {
    val file = JsonMethods.parse(OptionCatalog.json)
    assert((file \ "version") == JInt(OptionCatalog.Version))
    assert((file \ "messages" \ "invalid") ==
      JString("Invalid value '{value}' for option '{option}': expected {accepted}."))
    val source = (file \ "parts" \ "source").children
    val maxRecords = source.find(o => (o \ "name") == JString("maxRecordsPerFetch")).get
    assert(maxRecords == JObject("name" -> JString("maxRecordsPerFetch"), "kind" -> JString("integer"),
      "accepted" -> JString("an integer from 1 to 10000"), "min" -> JInt(1), "max" -> JInt(10000),
      "default" -> JString("10000"), "secret" -> JBool(false)))
    val connection = (file \ "parts" \ "connection").children
    val duration = connection.find(o => (o \ "name") == JString("roleSessionDuration")).get
    assert((duration \ "maxMs") == JInt(43200000L) && (duration \ "default") == JString("1h"))
    val dynamoDb = (file \ "parts" \ "dynamoDb").children
    assert((connection ++ dynamoDb).filter(o => (o \ "secret") == JBool(true)).map(o => (o \ "name").values).toSet ==
      KinesisOptionKeys.Secret)
  }

  test("a value above a duration's maximum is told the range; below its minimum, the least") {
    val spec = io.kinesisspark.aws.ConnectionOptions.Spec.roleSessionDuration
    val above = intercept[IllegalArgumentException](spec.read(Map("roleSessionDuration" -> "13h").get))
    assert(above.getMessage ==
      "Invalid value '13h' for option 'roleSessionDuration': expected a duration from '15m' to '12h'.")
    val below = intercept[IllegalArgumentException](spec.read(Map("roleSessionDuration" -> "1m").get))
    assert(below.getMessage.endsWith("of at least 900000ms."))
  }

  test("a message shows a value holding a placeholder as it is") {
    val e = intercept[IllegalArgumentException](
      OptionKind.Integer(1, 5).read("shardsPerTask", "{accepted}"))
    assert(e.getMessage == "Invalid value '{accepted}' for option 'shardsPerTask': expected an integer from 1 to 5.")
  }
}
