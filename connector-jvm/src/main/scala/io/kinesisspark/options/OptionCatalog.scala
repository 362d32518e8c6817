package io.kinesisspark.options

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import org.json4s._
import org.json4s.jackson.JsonMethods

import io.kinesisspark.{KinesisErrors, KinesisOptionKeys, KinesisSourceOptions}
import io.kinesisspark.aws.ConnectionOptions
import io.kinesisspark.efo.EfoOptions
import io.kinesisspark.sink.KinesisSinkOptions
import io.kinesisspark.switching.{AwslabsCheckpointOptions, DynamoDbConnectionOptions, KclLeaseTableOptions}

/**
 * Every option of the connector, by the part that reads it, as one data file: names, kinds and bounds, defaults,
 * what each accepts, and the error messages' forms. The build writes it into the jar
 * ([[ResourcePath]], by this object's `main`: see build.sbt) and dev/build-python.sh copies it into the Python
 * package, whose checks of option values read it instead of keeping a copy of each option's rules (a Spark Connect
 * client has no JVM to ask).
 *
 * {{{
 *   OptionCatalog.json   // {"version":1,"messages":{...},"parts":{"source":[{"name":"streamName",...},...],...}}
 * }}}
 */
object OptionCatalog {
  /** Where the data file sits in the jar. */
  val ResourcePath = "io/kinesisspark/options/catalog.json"
  /** Goes up when a reader of the file would misread the new form. */
  val Version = 1

  /** The options of each part: the source's own, the connection's (source, sink and consumer manager), enhanced
   * fan-out's (the source's with `consumerMode` `efo`), the start from a KCL lease table's and from an awslabs
   * checkpoint's (the source's), DynamoDB's connection for either, and the sink's. */
  val parts: Seq[(String, Seq[OptionSpec[_]])] = Seq(
    "source" -> KinesisSourceOptions.Spec.all,
    "connection" -> ConnectionOptions.Spec.all,
    "efo" -> EfoOptions.Spec.all,
    "kclLeaseTable" -> KclLeaseTableOptions.Spec.all,
    "awslabsCheckpoint" -> AwslabsCheckpointOptions.Spec.all,
    "dynamoDb" -> DynamoDbConnectionOptions.Spec.all,
    "sink" -> KinesisSinkOptions.Spec.all)

  private def entry(spec: OptionSpec[_]): JObject = JObject(
    List[JField]("name" -> JString(spec.name), "kind" -> JString(spec.kind.name),
      "accepted" -> JString(spec.kind.accepted)) ++
      spec.kind.fields ++
      List[JField]("default" -> spec.renderedDefault.fold[JValue](JNull)(JString(_)),
        "secret" -> JBool(KinesisOptionKeys.Secret.contains(spec.name))))

  /** The data file's text. */
  lazy val json: String = JsonMethods.pretty(JsonMethods.render(JObject(
    "version" -> JInt(Version),
    "messages" -> JObject(KinesisErrors.OptionMessageForms.toList.map { case (k, form) => k -> JString(form) }),
    "parts" -> JObject(parts.toList.map { case (part, specs) => part -> JArray(specs.map(entry).toList) })))) + "\n"

  /** Writes the data file to the path given (the build's resource folder). */
  def main(args: Array[String]): Unit = {
    val out = Paths.get(args.headOption.getOrElse(sys.error("usage: OptionCatalog <file to write>")))
    Files.createDirectories(out.getParent)
    Files.write(out, json.getBytes(StandardCharsets.UTF_8))
  }
}
