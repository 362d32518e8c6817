package io.kinesisspark.aws

import org.scalatest.funsuite.AnyFunSuite

import io.kinesisspark.aws.AwsCredentialsConfig._

class CredentialsProvidersSuite extends AnyFunSuite {
  private val sts = StsLocation("us-east-1", Some(new java.net.URI("http://127.0.0.1:1")))
  private val tls = TlsSettings()

  private def role(n: Int, base: AwsCredentialsConfig) =
    AssumeRole(s"arn:aws:iam::123456789012:role/r$n", None, "kinesis-spark", 900, base, sts)

  test("one provider per configuration and JVM, shared by every client") {
    val keys = StaticKeys(s"AKID${System.nanoTime}", "sk")
    assert(CredentialsProviders.get(keys, tls) eq CredentialsProviders.get(keys, tls))
    assert(CredentialsProviders.get(role(0, keys), tls) eq CredentialsProviders.get(role(0, keys), tls))
    assert(!(CredentialsProviders.get(role(1, keys), tls) eq CredentialsProviders.get(role(0, keys), tls)))
  }

  test("building many assumed roles never updates the cache from inside an update") {
    // Building a role needs its base provider. Looked up inside the role's own map update, that failed with
    // "Recursive update" whenever both keys fell in one bin of the map, so only some role ARNs broke; many roles,
    // each with a base not built yet, make such a collision all but certain.
    (1 to 2000).foreach { n =>
      val config = role(n, StaticKeys(s"AKID-$n", "sk"))
      assert(CredentialsProviders.get(config, tls) != null)
    }
  }
}
