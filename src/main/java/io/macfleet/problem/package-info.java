/**
 * The neutral RFC 9457 problem type ({@link io.macfleet.problem.Problem}) and the exception that ends a request with
 * one ({@link io.macfleet.problem.ProblemException}). Core layer: any feature's resource may throw it without
 * importing the REST plumbing in {@code api}, whose exception mapper turns it into the HTTP answer.
 */
package io.macfleet.problem;
