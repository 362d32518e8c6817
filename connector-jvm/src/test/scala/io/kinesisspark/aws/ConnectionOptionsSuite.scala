package io.kinesisspark.aws

import java.nio.file.Files

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.aws.AwsCredentialsConfig._

class ConnectionOptionsSuite extends AnyFunSuite {
  private val base = Map("region" -> "us-east-1")
  private val role = "arn:aws:iam::123456789012:role/reader"

  private def parse(options: (String, String)*): AwsConnection = ConnectionOptions.parse((base ++ options).get)
  private def rejected(options: (String, String)*): String =
    intercept[IllegalArgumentException](parse(options: _*)).getMessage

  test("keys, with a session token for temporary ones") {
    assert(parse("awsAccessKey" -> "AKID", "awsSecretKey" -> "sk").credentials == StaticKeys("AKID", "sk", None))
    assert(parse("awsAccessKey" -> "ASIA", "awsSecretKey" -> "sk", "awsSessionToken" -> "tok").credentials ==
      StaticKeys("ASIA", "sk", Some("tok")))
    assert(rejected("awsSessionToken" -> "tok").contains("'awsSessionToken'"))
  }

  test("an assumed role with the default chain or with keys, STS in the query's region unless told otherwise") {
    val byChain = parse("roleArn" -> role).credentials
    assert(byChain == AssumeRole(role, None, "kinesis-spark", 3600, DefaultChain, StsLocation("us-east-1", None)))
    val byKeys = parse("roleArn" -> role, "roleExternalId" -> "ext-1", "roleSessionName" -> "etl",
      "roleSessionDuration" -> "2h", "awsAccessKey" -> "AKID", "awsSecretKey" -> "sk",
      "stsEndpoint" -> "http://127.0.0.1:5000", "stsRegion" -> "eu-west-1").credentials
    assert(byKeys == AssumeRole(role, Some("ext-1"), "etl", 7200, StaticKeys("AKID", "sk"),
      StsLocation("eu-west-1", Some(new java.net.URI("http://127.0.0.1:5000")))))
  }

  test("role options are checked, and need roleArn") {
    assert(rejected("roleArn" -> "reader").contains("'roleArn'"))
    assert(rejected("roleArn" -> role, "roleSessionName" -> "a b").contains("'roleSessionName'"))
    assert(rejected("roleArn" -> role, "roleSessionDuration" -> "5m").contains("'roleSessionDuration'"))
    assert(rejected("roleArn" -> role, "roleSessionDuration" -> "13h").contains("12h"))
    val badId = rejected("roleArn" -> role, "roleExternalId" -> "secret id with spaces")
    assert(badId.contains("'roleExternalId'") && !badId.contains("secret id"), badId)
    assert(rejected("roleSessionName" -> "etl").contains("'roleArn'"))
    assert(rejected("stsEndpoint" -> "http://127.0.0.1:5000").contains("'roleArn'"))
  }

  test("a provider class, alone or as the base of a role, never together with keys") {
    assert(parse("credentialsProviderClass" -> "com.example.P", "credentialsProviderParam" -> "x").credentials ==
      ProviderClass("com.example.P", Some("x")))
    assert(parse("credentialsProviderClass" -> "com.example.P", "roleArn" -> role).credentials.asInstanceOf[AssumeRole].base ==
      ProviderClass("com.example.P", None))
    assert(rejected("credentialsProviderClass" -> "P", "awsAccessKey" -> "A", "awsSecretKey" -> "S").contains("cannot be used together"))
    assert(rejected("credentialsProviderParam" -> "x").contains("'credentialsProviderClass'"))
  }

  test("descriptions and toString never show a secret") {
    val keys = StaticKeys("AKIDSHOWNNOWHERE", "SECRETSHOWNNOWHERE", Some("TOKENSHOWNNOWHERE"))
    val assumed = AssumeRole(role, Some("EXTERNALSHOWNNOWHERE"), "s", 900, keys, StsLocation("us-east-1", None))
    for (text <- Seq(keys.toString, keys.description, assumed.toString, assumed.description);
         secret <- Seq("AKIDSHOWNNOWHERE", "SECRETSHOWNNOWHERE", "TOKENSHOWNNOWHERE", "EXTERNALSHOWNNOWHERE")) {
      assert(!text.contains(secret), text)
    }
  }

  test("a CA bundle is read on the driver; trusting everything is a separate, explicit choice") {
    val missing = rejected("caBundle" -> "/nonexistent/ca.pem")
    assert(missing.contains("'caBundle'") && missing.contains("/nonexistent/ca.pem"))
    val notPem = Files.createTempFile("not-a-ca", ".pem")
    Files.write(notPem, "hello".getBytes)
    assert(rejected("caBundle" -> notPem.toString).contains("X.509"))
    assert(parse("insecureTrustAllCertificates" -> "true").tls == TlsSettings(None, trustAllCertificates = true))
    assert(parse().tls == TlsSettings())
  }

  test("a user provider class is made with its parameter, and explained when it does not fit") {
    val provider = CredentialsProviders.get(ProviderClass(classOf[ConnectionOptionsSuite.FixedProvider].getName, Some("ASIAFIXED")),
      TlsSettings())
    val c = provider.resolveCredentials()
    assert(c.accessKeyId == "ASIAFIXED" && c.isInstanceOf[software.amazon.awssdk.auth.credentials.AwsSessionCredentials])
    val notOurs = intercept[IllegalArgumentException](CredentialsProviders.get(ProviderClass("java.lang.String", None), TlsSettings()))
    assert(notOurs.getMessage.contains("does not implement io.kinesisspark.aws.KinesisCredentialsProvider"))
    val missing = intercept[IllegalArgumentException](CredentialsProviders.get(ProviderClass("no.such.Provider", None), TlsSettings()))
    assert(missing.getMessage.contains("cannot be found"))
  }
}

object ConnectionOptionsSuite {
  final class FixedProvider(keyId: String) extends KinesisCredentialsProvider {
    override def credentials(): KinesisCredentials = KinesisCredentials(keyId, "secret", Some("token"))
  }
}
